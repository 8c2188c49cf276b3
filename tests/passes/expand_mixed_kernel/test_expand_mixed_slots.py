"""pl.cross_core_slot(slot_num=, local_slot_num=): validation, printing, outlining and the ring it sizes."""

import warnings

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


def _program(local=None):
    opt = pl.cross_core_slot(slot_num=4, local_slot_num=local)

    @pl.program
    class P:
        @pl.function
        def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
                 c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP, optimizations=[opt]):
                z = pl.matmul(a, b, out_dtype=pl.FP32)
                c = pl.assemble(c, pl.exp(z), [0, 0])
            return c
    return P


def _lower_to_expand(program, platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        p = program
        for name in ("convert_to_ssa", "simplify", "normalize_stmt_structure", "flatten_call_expr",
                     "outline_incore_scopes", "convert_tensor_to_tile_ops", "infer_tile_memory_space",
                     "expand_mixed_kernel"):
            p = getattr(passes, name)()(p)
        return p


def test_cross_core_slot_validation():
    with pytest.raises(ValueCheckError, match="slot_num must be a positive integer"):
        pl.cross_core_slot(slot_num=0)
    with pytest.raises(ValueCheckError, match="local_slot_num \\(4\\) must not exceed slot_num \\(2\\)"):
        pl.cross_core_slot(slot_num=2, local_slot_num=4)
    with pytest.warns(DeprecationWarning, match="pl.cross_core_slot"):
        pl.split(pl.SplitMode.UP_DOWN, slot_num=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pl.split(pl.SplitMode.UP_DOWN)


def test_slot_num_prints_and_sizes_the_rings():
    text = _program().as_python()
    assert "optimizations=[pl.cross_core_slot(slot_num=4)]" in text
    after = _lower_to_expand(_program(), "a5")
    assert after["main_incore_0"].func_type is pl.FunctionType.Group
    aiv = flatten_to_stmts(after["main_incore_0_aiv"].body)
    assert aiv[0].value.kwargs["size"] == 1024 * 4 and aiv[1].expr.kwargs["slot_num"] == 4


def test_local_slot_num_on_a2a3_sizes_the_reserve_and_a5_rejects_it():
    after = _lower_to_expand(_program(local=1), "a2a3")
    aiv = flatten_to_stmts(after["main_incore_0_aiv"].body)
    assert aiv[0].value.kwargs["size"] == 1024 and aiv[1].expr.kwargs["local_slot_num"] == 1
    with pytest.raises(UnsupportedError, match="a5 .* has no separate local depth"):
        _lower_to_expand(_program(local=1), "a5")
