"""Small forms the reference's programs use: `tuple[...]` variable annotations, program methods
without `self` (static helpers), dtype methods in kernel code, constants captured from a factory
function inside annotations, `Function.as_python()`, and `pl.parse` of text with nothing in it."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.types import TupleType
from pypto.runtime import RunConfig, run

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])


def build(rows):
    """The program-factory pattern: `rows` is captured from the enclosing function."""

    @pl.program
    class Scaled:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[rows, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[rows, 64], pl.FP32]]) -> pl.Tensor[[rows, 64], pl.FP32]:
            width = 16 * pl.FP32.get_byte()             # 64: a dtype method in kernel code
            t = pl.load(a, [0, 0], [rows, width])
            out = pl.store(pl.mul(t, 2.0), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Opaque)
        def pair(a: pl.Tensor[[rows, 64], pl.FP32]) -> tuple[pl.Tensor[[rows, 64], pl.FP32],
                                                           pl.Tensor[[rows, 64], pl.FP32]]:
            return a, a                                  # no `self`: a static helper

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[rows, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[rows, 64], pl.FP32]]) -> pl.Tensor[[rows, 64], pl.FP32]:
            both: tuple[pl.Tensor[[rows, 64], pl.FP32], pl.Tensor[[rows, 64], pl.FP32]] = self.pair(a)
            first = both[0]
            out = self.k(first, out)
            return out

    return Scaled


def test_factory_constants_static_helper_and_tuple_annotation_parse():
    p = build(16)
    assert [d.value for d in p.functions["k"].params[0].type.shape] == [16, 64]
    assert len(p.functions["pair"].params) == 1
    both = p.functions["main"].body.stmts[0]
    assert isinstance(both.var.type, TupleType) and len(both.var.type.types) == 2
    assert [d.value for d in build(32).functions["k"].params[0].type.shape] == [32, 64]


@SIMS
def test_factory_program_runs(platform):
    a = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    out = np.zeros((32, 64), np.float32)
    run(build(32), a, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, 2 * a, rtol=1e-6)


def test_tuple_annotation_with_a_non_type_is_a_clear_error():
    with pytest.raises(pl.parser.ParserTypeError if hasattr(pl, "parser") else TypeError,
                       match="invalid tuple element type"):
        @pl.function(type=pl.FunctionType.Opaque)
        def bad(a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            x: tuple[pl.Tensor[[16], pl.FP32], 3] = a
            return a


def test_function_as_python_reads_back():
    f = build(16).functions["k"]
    text = f.as_python()
    assert text.count("@pl.function") == 1 and "def k(" in text
    again = pl.parse(text)
    assert again.name == "k" and len(again.params) == 2


def test_parse_of_text_defining_nothing_is_a_value_error_and_a_syntax_error():
    with pytest.raises(ValueError, match="defines no @pl.program"):
        pl.parse("x = 42\n")
    with pytest.raises(SyntaxError):
        pl.parse("x = 42\n")
