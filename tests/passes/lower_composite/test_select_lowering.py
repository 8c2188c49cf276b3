"""LowerCompositeOps on tile.select: the three branch cases, the backend scratch plans (a2a3 / a5),
the dtype restrictions, and the type rule's rejections (seed 001, "Algorithm (tile.select rule)")."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.dtypes import BF16, FP16, FP32, INT8, UINT8, UINT32
from pypto.ir.expr import Call, ConstFloat, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.ops.tile_select import is_packed_predicate_mask
from pypto.ir.types import ScalarType, TileType, TileView
from pypto.ir.visitor import collect
from pypto.passes.context import PassContext
from pypto.passes.lower_composite_ops.scratch import ScratchPlan, plan_op_scratch
from pypto.passes.lower_composite_ops import lower_composite_ops


def calls(program, name=None) -> list:
    return collect(program, lambda n: isinstance(n, Call) and not n.is_function_call()
                   and (name is None or n.op.name == name))


def lower(program, platform):
    with PassContext(platform=platform):
        return lower_composite_ops()(program)


@pl.program
class TwoTiles:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        m = pl.tile.cmp(ta, tb, cmp_type=pl.CmpType.GT)
        y = pl.tile.select(m, ta, tb)
        out = pl.store(y, [0, 0], out)
        return out


@pl.program
class TwoTilesExpectedA5:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        m = pl.tile.cmp(ta, tb, cmp_type=pl.CmpType.GT)
        tmp = pl.tile.create([1, 32], dtype=pl.UINT8, target_memory=pl.Mem.Vec)
        y = pl.tile.sel(m, ta, tb, tmp)
        out = pl.store(y, [0, 0], out)
        return out


@pl.program
class TwoTilesExpectedA2A3:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        m = pl.tile.cmp(ta, tb, cmp_type=pl.CmpType.GT)
        tmp = pl.tile.create([1, 16], dtype=pl.UINT32, target_memory=pl.Mem.Vec)
        y = pl.tile.sel(m, ta, tb, tmp)
        out = pl.store(y, [0, 0], out)
        return out


@pytest.mark.parametrize("platform, expected", [("a5", TwoTilesExpectedA5), ("a2a3", TwoTilesExpectedA2A3)])
def test_two_tiles_become_scratch_and_tsel(platform, expected):
    after = lower(TwoTiles, platform)
    ir.assert_structural_equal(after, expected)
    assert lower(after, platform) is after            # idempotent: nothing composite is left


@pl.program
class ScalarOnFalse:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 64])
        m = pl.tile.cmps(ta, 0.0, cmp_type=pl.CmpType.GT)
        y = pl.tile.select(m, ta, -1.5)
        out = pl.store(y, [0, 0], out)
        return out


@pl.program
class ScalarOnFalseExpectedA2A3:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 64])
        m = pl.tile.cmps(ta, 0.0, cmp_type=pl.CmpType.GT)
        tmp = pl.tile.create([1, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        y = pl.tile.sels(m, ta, tmp, -1.5)
        out = pl.store(y, [0, 0], out)
        return out


def test_tile_scalar_is_one_tsels_with_a_full_source_row_of_scratch_on_a2a3():
    ir.assert_structural_equal(lower(ScalarOnFalse, "a2a3"), ScalarOnFalseExpectedA2A3)


def test_tile_scalar_on_a5_uses_the_byte_scratch():
    after = lower(ScalarOnFalse, "a5")
    (create,) = calls(after, "tile.create")
    assert [d.value for d in create.type.shape] == [1, 32] and create.type.dtype is UINT8
    assert calls(after, "tile.sels") and not calls(after, "tile.select")


@pl.program
class ScalarOnTrue:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 64], valid_shape=[12, 40])
        m = pl.tile.cmps(ta, 0.0, cmp_type=pl.CmpType.GT)
        y = pl.tile.select(m, 2.0, ta)
        out = pl.store(y, [0, 0], out)
        return out


def test_scalar_on_true_is_materialized_with_the_other_branch_view():
    after = lower(ScalarOnTrue, "a5")
    (full,) = calls(after, "tile.full")
    (sel,) = calls(after, "tile.sel")
    assert full.kwargs["value"] == 2.0 and sel.args[1].type.valid_shape == sel.args[2].type.valid_shape
    assert [d.value for d in sel.type.valid_shape] == [12, 40]   # the select stays narrowed
    assert not calls(after, "tile.sels")


def test_bf16_tile_scalar_falls_back_to_tsel_on_both_backends():
    t = Var("t", TileType([16, 64], BF16))
    m = Var("m", create_op_call("tile.cmps", [t, ConstFloat(0.0)]).type)
    for platform in ("a2a3", "a5"):
        assert plan_op_scratch(platform, "tile.sels", BF16, 64) is None
        assert plan_op_scratch(platform, "tile.sel", BF16) is not None
    assert create_op_call("tile.select", [m, t, ConstFloat(1.0)]).type.dtype is BF16


def test_scratch_plans():
    assert plan_op_scratch("a2a3", "tile.sel", FP16) == ScratchPlan((1, 16), UINT32)
    assert plan_op_scratch("a2a3", "tile.sels", FP16, 128) == ScratchPlan((1, 128), FP16)
    assert plan_op_scratch("a5", "tile.sel", FP32) == plan_op_scratch("a5", "tile.sels", FP32, 64) \
        == ScratchPlan((1, 32), UINT8)
    assert plan_op_scratch("a2a3", "tile.sel", INT8) is None and plan_op_scratch("a5", "tile.sel", INT8) is not None


@pl.program
class Int8Select:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 64], pl.INT8], b: pl.Tensor[[16, 64], pl.INT8],
               out: pl.Out[pl.Tensor[[16, 64], pl.INT8]]) -> pl.Tensor[[16, 64], pl.INT8]:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        m = pl.tile.cmp(ta, tb, cmp_type=pl.CmpType.GT)
        y = pl.tile.select(m, ta, tb)
        out = pl.store(y, [0, 0], out)
        return out


def test_int8_select_is_unsupported_on_a2a3_only():
    with pytest.raises(UnsupportedError, match="tile.select of INT8 tiles is not supported on a2a3"):
        lower(Int8Select, "a2a3")
    assert calls(lower(Int8Select, "a5"), "tile.sel")


# ---------------------------------------------------------------------------- type rule
def tile(shape, dtype=FP32, valid=None):
    t = TileType(shape, dtype)
    return Var("t", t.with_valid_shape(valid) if valid else t)


def mask_for(t: Var) -> Var:
    return Var("m", create_op_call("tile.cmps", [t, ConstFloat(0.0)]).type)


def test_mask_predicate_is_the_cmp_result_type():
    t = tile([16, 40], valid=[16, 20])
    m = mask_for(t)
    assert [d.value for d in m.type.shape] == [16, 32] and [d.value for d in m.type.valid_shape] == [16, 3]
    assert is_packed_predicate_mask(m.type, t.type.shape, t.type.valid_shape)
    # a 0/1 value tile of the same geometry is not a mask
    assert not is_packed_predicate_mask(TileType([16, 32], UINT8).with_valid_shape([16, 3]), [16, 40], [16, 40])


@pytest.mark.parametrize("other, match", [
    (tile([8, 64]), "different shapes.*does not broadcast"),
    (tile([16, 64], valid=[16, 32]), "different valid shapes"),
    (tile([16, 64], FP16), "different dtypes"),
])
def test_mismatched_tile_branches_are_rejected(other, match):
    t = tile([16, 64])
    with pytest.raises(TypeCheckError, match=match) as e:
        create_op_call("tile.select", [mask_for(t), t, other])
    assert "broadcast" in str(e.value) or "cast" in str(e.value)


def test_value_tile_as_cond_is_rejected_with_the_cmps_hint():
    t = tile([16, 64])
    with pytest.raises(TypeCheckError, match=r"packed UINT8 predicate mask.*cmps\(v, 0, cmp_type=1\)"):
        create_op_call("tile.select", [tile([16, 64], UINT8), t, t])


def test_runtime_scalar_branch_is_rejected():
    t = tile([16, 64])
    with pytest.raises(TypeCheckError, match="compile-time constant"):
        create_op_call("tile.select", [mask_for(t), t, Var("s", ScalarType(FP32))])


def test_explicit_sel_keeps_caller_scratch():
    t = tile([16, 64])
    scratch = Var("tmp", TileType([4, 64], FP32))
    m = mask_for(t)
    call = create_op_call("tile.sel", [m, t, t, scratch])
    assert call.args[3] is scratch
    assert lower_composite_ops()(ir.Program([ir.Function("f", [m, t, scratch], [t.type], ir.SeqStmts([ir.ReturnStmt([call])]))], "P")) \
        .functions["f"].body.stmts[0].values[0].args[3] is scratch       # not composite: left as written
