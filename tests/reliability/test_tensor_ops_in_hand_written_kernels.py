"""Hand-written AIC / AIV kernels are tile-level: a tensor op in one (written, or made by rebinding an
`Out` parameter to another tensor) is an error at the user's line, not a failed property check
after ConvertTensorToTileOps (found by fuzz seed 30: `out = pl.store(t, [0, 0], x)` in an AIV kernel)."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.language.parser.diagnostics import ParserTypeError
from pypto.runtime.compile import compile_program

_TEMPLATE = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.{kind})
    def k(self, x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for _ in pl.range(2):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
            {line}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.k(x, out)
        return r
"""
_LINE = 11


def test_rebinding_an_out_parameter_to_a_store_into_another_tensor_is_a_parse_error():
    text = _TEMPLATE.format(kind="AIV", line="out = pl.store(t, [0, 0], x)")
    with pytest.raises(ParserTypeError, match=r"Out parameter 'out' of a hand-written AIV kernel") as info:
        pl.parse(text)
    assert info.value.span.begin_line == _LINE
    assert "pl.store(tile, offsets, out)" in str(info.value)


@pytest.mark.parametrize("line, op", [
    ("out = pl.assemble(out, x, [0, 0])", "tensor.assemble"),
    ("u = pl.add(x, x)", "tensor.add"),
])
def test_a_tensor_op_in_an_aiv_kernel_is_an_error_at_its_line(line, op):
    program = pl.parse(_TEMPLATE.format(kind="AIV", line=line))
    with pytest.raises(UnsupportedError, match=rf"tensor op '{op}' in the hand-written AIV kernel 'k'") as info:
        compile_program(program, platform="a2a3sim")
    assert info.value.span.begin_line == _LINE
    assert "type=pl.FunctionType.InCore" in str(info.value)


def test_the_same_lines_in_an_incore_kernel_still_compile():
    for line in ("out = pl.store(t, [0, 0], out)", "u = pl.add(x, x)"):
        compile_program(pl.parse(_TEMPLATE.format(kind="InCore", line=line)), platform="a2a3sim")
