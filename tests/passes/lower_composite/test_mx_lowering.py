"""LowerCompositeOps on tile.tquant_mx: value-returning raw + x2zz primitives with Vec workspaces,
both group axes, projections folded, idempotent, a5 only (seed 001, tile.tquant_mx rule)."""

import pytest

import pypto.language as pl
from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.dtypes import FP8E4M3FN, FP8E8M0, FP16
from pypto.ir.enums import MemorySpace, TileLayout
from pypto.ir.equality import assert_structural_equal
from pypto.ir.expr import Call, TupleGetItem, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt
from pypto.ir.types import TileType
from pypto.ir.visitor import collect
from pypto.passes.context import PassContext
from pypto.passes.lower_composite_ops import lower_composite_ops


def quant_program(rows, cols, axis):
    qr, qc = (rows, cols) if axis == 1 else (cols, rows)
    sr, sc = (rows, cols // 32) if axis == 1 else (cols // 32, rows)

    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, src: pl.Tensor[[rows, cols], pl.FP16], q: pl.Out[pl.Tensor[[qr, qc], pl.FP8E4M3FN]],
                   s: pl.Out[pl.Tensor[[sr, sc], pl.FP8E8M0]]) -> pl.Tensor[[qr, qc], pl.FP8E4M3FN]:
            t = pl.load(src, [0, 0], [rows, cols])
            pair = pl.tile.tquant_mx(t, group_axis=axis)
            data = pair[0]
            scale = pair[1]
            s = pl.store(scale, [0, 0], s)
            q = pl.store(data, [0, 0], q)
            return q
    return Before


def ops(program) -> list:
    return [c.op.name for c in collect(program, lambda n: isinstance(n, Call) and not n.is_function_call())]


@pytest.mark.parametrize("rows, cols, axis", [(16, 64, 1), (32, 64, 0)])
def test_tquant_mx_becomes_value_returning_primitives(rows, cols, axis):
    with PassContext(platform="a5"):
        after = lower_composite_ops()(quant_program(rows, cols, axis))
        again = lower_composite_ops()(after)
    names = ops(after)
    assert "tile.tquant_mx" not in names
    assert names.count("tile.tquant_mx_raw") == 1 and names.count("tile.tmov_x2zz") == 1
    assert ("tile.transpose" in names) == (axis == 0) and ("tile.transpose_view" in names) == (axis == 0)
    assert names.count("tile.reinterpret_view") == 2
    raw = [s for s in collect(after, lambda n: isinstance(n, (AssignStmt, EvalStmt)))
           if isinstance(getattr(s, "value", None), Call) and s.value.op.name == "tile.tquant_mx_raw"]
    assert len(raw) == 1 and isinstance(raw[0], AssignStmt)          # bound, not an EvalStmt
    creates = [c for c in collect(after, lambda n: isinstance(n, Call) and not n.is_function_call())
               if c.op.name == "tile.create"]
    assert len(creates) == 3 and all(c.kwargs["target_memory"] is MemorySpace.Vec for c in creates)
    x2zz_tmp = creates[-1].type
    assert [d.value for d in x2zz_tmp.shape] == ([1, 96] if axis == 1 else [1, 32])   # 64 + 1·2 → 96
    # the user's projections were folded: no TupleGetItem of a lowered tuple is left behind
    gets = collect(after, lambda n: isinstance(n, TupleGetItem))
    assert all(g.tuple.type is not None and "raw" in g.tuple.name_hint for g in gets)
    assert again is after or assert_structural_equal(again, after) is None
    stores = [c for c in collect(after, lambda n: isinstance(n, Call) and not n.is_function_call())
              if c.op.name == "tile.store"]
    assert [st.args[0].type.dtype for st in stores] == [FP8E8M0, FP8E4M3FN]


def test_public_types():
    t = Var("t", TileType([32, 128], FP16, memory_space=MemorySpace.Vec))
    a1 = create_op_call("tile.tquant_mx", [t], {"group_axis": 1}).type.types
    assert [d.value for d in a1[0].shape] == [32, 128] and a1[0].dtype is FP8E4M3FN
    assert [d.value for d in a1[1].shape] == [32, 4] and a1[1].dtype is FP8E8M0
    a0 = create_op_call("tile.tquant_mx", [t], {"group_axis": 0}).type.types
    assert [d.value for d in a0[0].shape] == [128, 32] and [d.value for d in a0[1].shape] == [4, 32]
    assert a0[1].tile_view.blayout is TileLayout.col_major


@pytest.mark.parametrize("shape, axis, match", [([16, 96], 1, "multiple of 64"), ([8, 64], 1, "multiple of 16"),
                                                ([16, 64], 0, "multiple of 32"), ([16, 64], 2, "group_axis")])
def test_shape_rules(shape, axis, match):
    t = Var("t", TileType(shape, FP16))
    with pytest.raises(TypeCheckError, match=match):
        create_op_call("tile.tquant_mx", [t], {"group_axis": axis})


def test_a5_only():
    with PassContext(platform="a2a3"), pytest.raises(UnsupportedError, match="a5 .*only"):
        lower_composite_ops()(quant_program(16, 64, 1))
