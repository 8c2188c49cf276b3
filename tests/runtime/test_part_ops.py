"""Partial (segmented) arithmetic part_add / part_mul / part_max / part_min against numpy.

Each is one row of pypto/ir/ops/elementwise.py (the recipe of docs/internals.md, "Adding an
op"): the row alone gives the tile op, the tensor op and its lowering, the DSL names, the
simulator semantics and the PTO instruction, all exercised here. Over src0's valid region the
result is op(src0, src1) where src1 is valid too and src0 where it is not.
"""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.runtime import run

OPS = {"part_add": np.add, "part_mul": np.multiply, "part_max": np.maximum, "part_min": np.minimum}

TILE = """
import pypto.language as pl

@pl.program
class Part:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32], valid_shape=[{rows}, {cols}])
        out = pl.store(pl.tile.{op}(ta, tb), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.kernel(a, b, out)
        return out
"""

TENSOR = """
import pypto.language as pl

@pl.program
class Part:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            r: pl.Tensor[[16, 32], pl.FP32] = pl.{op}(a, b)
            out = pl.assemble(out, r, [0, 0])
        return out
"""


def _inputs():
    rng = np.random.default_rng(11)
    return (rng.uniform(-3, 3, (16, 32)).astype(np.float32), rng.uniform(-3, 3, (16, 32)).astype(np.float32))


def _run(text, a, b):
    out = np.zeros_like(a)
    result = run(pl.parse(text))(a, b, out)
    return out if result is None else result


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("rows, cols", [(16, 32), (16, 20), (9, 32), (5, 7)])
def test_tile_form_copies_src0_where_src1_is_invalid(op, rows, cols):
    a, b = _inputs()
    want = a.copy()
    want[:rows, :cols] = OPS[op](a[:rows, :cols], b[:rows, :cols])
    np.testing.assert_allclose(_run(TILE.format(op=op, rows=rows, cols=cols), a, b), want, rtol=1e-6)


@pytest.mark.parametrize("op", list(OPS))
def test_tensor_form_lowers_to_the_tile_op(op):
    a, b = _inputs()
    np.testing.assert_allclose(_run(TENSOR.format(op=op), a, b), OPS[op](a, b), rtol=1e-6)


@pytest.mark.parametrize("op", list(OPS))
def test_pto_instruction(op, tmp_path):
    ir.compile(pl.parse(TILE.format(op=op, rows=16, cols=20)), output_dir=tmp_path)
    text = (tmp_path / "ptoas" / "kernel.pto").read_text()
    assert f"pto.t{op.replace('_', '')} ins(" in text


def test_operands_must_agree():
    bad = TENSOR.format(op="part_add").replace("pl.part_add(a, b)", "pl.part_add(a, pl.cast(b, pl.FP16))")
    with pytest.raises(TypeCheckError, match="tensor.part_add: arguments 'lhs' and 'rhs' have different dtypes"):
        pl.parse(bad)
