"""Seed 004 step 10: every consumer pop gets its tfree, on the popped tile itself, after the last use
of any name the tile goes by (an alias `a = t`, an if result that every branch yields from it)."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.stmt import EvalStmt
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


def _expand(program, platform="a5"):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(program)))


@pl.program
class FreedThroughAnAlias:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self):
        got: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0, id=1)
        same: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = got
        pl.system.tfree_to_aiv(same, id=0)
        v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        pl.system.tfree_to_aic(v)


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_a_written_free_of_an_alias_frees_the_popped_tile_and_keeps_its_id(platform):
    aic = _expand(FreedThroughAnAlias, platform).get_function("k_aic")
    stmts = ir.flatten_to_stmts(aic.body)
    pop = next(s for s in stmts if getattr(s, "value", None) is not None
               and getattr(s.value, "op", None) is not None and s.value.op.name == "tile.tpop_from_aiv")
    frees = [s.expr for s in stmts if isinstance(s, EvalStmt) and s.expr.op.name == "system.tfree_to_aiv"]
    assert len(frees) == 1
    assert frees[0].args[0] is pop.var and frees[0].kwargs["id"] == 0


@pl.program
class AliasedByAnIf:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, flag: pl.Scalar[pl.INDEX], x: pl.Tensor[[4, 32], pl.BF16], y: pl.Tensor[[32, 32], pl.BF16],
          out: pl.Out[pl.Tensor[[4, 32], pl.FP32]]) -> pl.Tensor[[4, 32], pl.FP32]:
        x_l = pl.move(pl.load(x, [0, 0], [4, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        y_r = pl.move(pl.load(y, [0, 0], [32, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        z = pl.matmul(x_l, y_r)
        z_v = pl.move(z, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        if flag == 0:
            picked = z_v
        else:
            picked = z_v
        doubled = pl.add(picked, picked)
        out = pl.store(doubled, [0, 0], out)
        return out


@pl.program
class AliasedByAnIfVector:
    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, flag: pl.Scalar[pl.INDEX], x: pl.Tensor[[4, 32], pl.BF16], y: pl.Tensor[[32, 32], pl.BF16],
              out: pl.Out[pl.Tensor[[4, 32], pl.FP32]]) -> pl.Tensor[[4, 32], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=1024, base=-1)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=512, slot_num=2)
        z_v: pl.Tile[[4, 32], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        if flag == 0:
            picked = z_v
        else:
            picked = z_v
        doubled: pl.Tile[[4, 32], pl.FP32, pl.Mem.Vec] = pl.add(picked, picked)
        pl.system.tfree_to_aic(z_v)                  # after the if's result is last read, not after the if
        out_1: pl.Tensor[[4, 32], pl.FP32] = pl.store(doubled, [0, 0], out)
        return out_1


def test_the_free_waits_for_the_last_read_of_an_if_result_aliasing_the_pop():
    after = _expand(AliasedByAnIf)
    expected = passes.convert_to_ssa()(AliasedByAnIfVector)
    ir.assert_structural_equal(after.get_function("k_aiv"), expected.get_function("k_aiv"))
