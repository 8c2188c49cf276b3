"""Seed 004, "Fractal TileView 布局": the layouts a Vector → Cube boundary carries, as Before / Expected.

The AIC pops every V→C tile into Mat, in Mat's own NZ layout (so its type spells no view), and a
same-side move takes it on to Left / Right / Bias, spelling the target's layout. On a5 the AIV first
moves its Vec tile into the layout the cube reads from the FIFO: NZ towards Left / Right (Right too:
the bridge is NZ, ZN is only the Mat → Right move's), the layout the move wrote towards Mat. On a2a3
the tile goes through GM and the push sends it as it is.
"""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.pypto_core import passes
from pypto.runtime import RunConfig

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])


def _expand(program, platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(program)))


def _same(after, expected, name):
    ir.assert_structural_equal(after.get_function(name), passes.convert_to_ssa()(expected).get_function(name))


@pl.program
class VecToLeft:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
          out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        a_v = pl.load(a, [0, 0], [16, 64])
        a_s = pl.add(a_v, a_v)
        a_l = pl.move(a_s, target_memory=pl.Mem.Left)
        b_m = pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b_r = pl.move(b_m, target_memory=pl.Mem.Right)
        c = pl.matmul(a_l, b_r)
        c_v = pl.move(c, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        out = pl.store(c_v, [0, 0], out)
        return out


@pl.program
class VecToLeftExpected:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
              out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_v2c_slot_buffer", size=4096, base=-1)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=2048, slot_num=2)
        a_l_mat: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0)
        a_l: pl.Tile[[16, 64], pl.BF16, pl.Mem.Left] = pl.tile.move(
            a_l_mat, target_memory=pl.Mem.Left, blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major)
        pl.system.tfree_to_aiv(a_l_mat)
        b_m: pl.Tile[[64, 32], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b_r: pl.Tile[[64, 32], pl.BF16, pl.Mem.Right] = pl.move(b_m, target_memory=pl.Mem.Right)
        c: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.matmul(a_l, b_r)
        pl.tile.tpush_to_aiv(c, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
              out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        v2c: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_v2c_slot_buffer", peer_func="k_aic")
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=4096, base=-1)
        pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=2048, slot_num=2)
        a_v: pl.Tile[[16, 64], pl.BF16, pl.Mem.Vec] = pl.load(a, [0, 0], [16, 64])
        a_s: pl.Tile[[16, 64], pl.BF16, pl.Mem.Vec] = pl.add(a_v, a_v)
        a_s_nz: pl.Tile[[16, 64], pl.BF16, pl.Mem.Vec,
                        pl.TileView(blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major)] = pl.tile.move(
            a_s, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.col_major, slayout=pl.TileLayout.row_major)
        pl.tile.tpush_to_aic(a_s_nz, split=0)
        c_v: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        out_1: pl.Tensor[[16, 32], pl.FP32] = pl.store(c_v, [0, 0], out)
        pl.system.tfree_to_aic(c_v)
        return out_1


def test_vec_to_left_pops_nz_mat_and_moves_on_a5():
    after = _expand(VecToLeft, "a5")
    _same(after, VecToLeftExpected, "k_aic")
    _same(after, VecToLeftExpected, "k_aiv")


def test_vec_to_left_on_a2a3_pushes_the_tile_as_it_is():
    after = _expand(VecToLeft, "a2a3")
    _same(after, VecToLeftExpected, "k_aic")             # the cube side is the same: Mat NZ, then Left
    aiv = after.get_function("k_aiv")
    assert [c.op.name for c in calls_in(aiv.body)] == [
        "system.import_peer_buffer", "system.reserve_buffer", "system.aiv_initialize_pipe", "tile.load", "tile.add",
        "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.store", "system.tfree_to_aic"]   # no layout move
    added = next(s for s in ir.flatten_to_stmts(aiv.body) if getattr(s, "value", None) is not None
                 and getattr(s.value, "op", None) is not None and s.value.op.name == "tile.add")
    push = next(c for c in calls_in(aiv.body) if c.op.name == "tile.tpush_to_aic")
    assert push.args[0] is added.var and aiv.attrs.get("dual_aiv_dispatch") is True


@pl.program
class VecToRight:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
          out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        a_m = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        a_l = pl.move(a_m, target_memory=pl.Mem.Left)
        b_v = pl.load(b, [0, 0], [64, 32])
        b_r = pl.move(b_v, target_memory=pl.Mem.Right)
        c = pl.matmul(a_l, b_r)
        c_v = pl.move(c, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        out = pl.store(c_v, [0, 0], out)
        return out


@pl.program
class VecToRightExpected:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
              out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_v2c_slot_buffer", size=8192, base=-1)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=4096, slot_num=2)
        a_m: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
        a_l: pl.Tile[[16, 64], pl.BF16, pl.Mem.Left] = pl.move(a_m, target_memory=pl.Mem.Left)
        b_r_mat: pl.Tile[[64, 32], pl.BF16, pl.Mem.Mat] = pl.tile.tpop_from_aiv(split=0)
        b_r: pl.Tile[[64, 32], pl.BF16, pl.Mem.Right] = pl.tile.move(
            b_r_mat, target_memory=pl.Mem.Right, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.col_major)
        pl.system.tfree_to_aiv(b_r_mat)
        c: pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc] = pl.matmul(a_l, b_r)
        pl.tile.tpush_to_aiv(c, split=0)


def test_vec_to_right_crosses_as_nz_and_the_cube_moves_it_to_zn():
    for platform in ("a2a3", "a5"):
        _same(_expand(VecToRight, platform), VecToRightExpected, "k_aic")
    aiv = _expand(VecToRight, "a5").get_function("k_aiv")
    push = [c for c in ir.flatten_to_stmts(aiv.body) if getattr(c, "expr", None) is not None
            and c.expr.op.name == "tile.tpush_to_aic"][0].expr
    view = push.args[0].type.effective_view
    assert (view.blayout, view.slayout) == (pl.TileLayout.col_major, pl.TileLayout.row_major)


@pl.program
class BiasFromVector:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16], bias: pl.Tensor[[1, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        a_l = pl.move(pl.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b_r = pl.move(pl.load(b, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        bias_v = pl.load(bias, [0, 0], [1, 32])
        bias_m = pl.move(bias_v, target_memory=pl.Mem.Mat, blayout=pl.TileLayout.col_major,
                         slayout=pl.TileLayout.row_major)
        c = pl.matmul_bias(a_l, b_r, bias_m)
        c_v = pl.move(c, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        out = pl.store(c_v, [0, 0], out)
        return out


def test_a_vec_to_mat_boundary_pops_in_mat_layout_and_the_cube_feeds_bias():
    after = _expand(BiasFromVector, "a5")
    aic = ir.flatten_to_stmts(after.get_function("k_aic").body)
    pop = next(s for s in aic if getattr(s, "value", None) is not None and s.value.op.name == "tile.tpop_from_aiv")
    assert pop.var.type.memory_space is pl.Mem.Mat and pop.var.type.tile_view is None    # Mat's own NZ
    bias_move = next(s for s in aic if getattr(s, "value", None) is not None and s.value.op.name == "tile.move"
                     and s.value.args[0] is pop.var)
    assert bias_move.value.kwargs["target_memory"] is pl.Mem.Bias
    aiv = ir.flatten_to_stmts(after.get_function("k_aiv").body)
    adapter = next(s for s in aiv if getattr(s, "value", None) is not None and s.value.op.name == "tile.move")
    assert (adapter.value.kwargs["blayout"], adapter.value.kwargs["slayout"]) == \
        (pl.TileLayout.col_major, pl.TileLayout.row_major)


@pl.jit
def vec_into_both_operands(a: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_v = pl.load(a, [0, 0], [16, 64])
        b_v = pl.load(b, [0, 0], [64, 32])
        left = pl.move(pl.add(a_v, a_v), target_memory=pl.Mem.Left)
        right = pl.move(pl.mul(b_v, b_v), target_memory=pl.Mem.Right)
        c = pl.matmul(left, right)
        pl.store(pl.move(c, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major,
                         slayout=pl.TileLayout.none_box), [0, 0], y)
    return y


@SIMS
def test_vec_operands_cross_to_the_cube_and_match_numpy(platform):
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (16, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    y = np.full((16, 32), np.nan, np.float32)
    vec_into_both_operands(a, b, y, config=RunConfig(platform=platform))
    want = (2 * a).astype(np.float32) @ (b * b).astype(np.float32)
    np.testing.assert_allclose(y, want, rtol=2e-2, atol=2e-2)
