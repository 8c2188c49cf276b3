"""A mixed GEMV kernel: the cube keeps the gemv family, the vector core pops the 16-row accumulator
with its one valid row and stores that row (seed 004 亲和性分类: gemv / gemv_acc / gemv_bias are CUBE)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.pypto_core import passes
from pypto.runtime import RunConfig


@pl.program
class GemvThenStore:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 128], pl.BF16], w: pl.Tensor[[128, 64], pl.BF16],
          out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        x_l = pl.move(pl.load(x, [0, 0], [1, 128], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        w_r = pl.move(pl.load(w, [0, 0], [128, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        y = pl.gemv(x_l, w_r)
        y_v = pl.move(y, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        out = pl.store(y_v, [0, 0], out)
        return out


@pl.program
class GemvThenStoreVector:
    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, x: pl.Tensor[[1, 128], pl.BF16], w: pl.Tensor[[128, 64], pl.BF16],
              out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=8192, base=-1)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=4096, slot_num=2)
        y_v: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[1, 64])] = pl.tile.tpop_from_aic(split=0)
        out_1: pl.Tensor[[1, 64], pl.FP32] = pl.store(y_v, [0, 0], out)
        pl.system.tfree_to_aic(y_v)
        return out_1


def test_the_vector_core_pops_the_whole_accumulator_box_with_one_valid_row():
    with PassContext(PassContext.current().instruments, platform="a5"):
        after = passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(GemvThenStore)))
    ir.assert_structural_equal(after.get_function("k_aiv"),
                               passes.convert_to_ssa()(GemvThenStoreVector).get_function("k_aiv"))
    aic_ops = [c.op.name for c in calls_in(after.get_function("k_aic").body)]
    assert "tile.gemv" in aic_ops and "tile.tpush_to_aiv" in aic_ops


@pl.jit
def gemv_twice_then_scale(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        left = pl.move(pl.load(x, [0, 0], [1, 128], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [128, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.tile.gemv(left, right)
        acc = pl.tile.gemv_acc(acc, left, right)
        v = pl.move(acc, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        pl.store(pl.muls(v, 0.5), [0, 0], y)
    return y


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_gemv_and_gemv_acc_through_the_pipe_match_numpy(platform):
    rng = np.random.default_rng(21)
    x = rng.uniform(-1, 1, (1, 128)).astype(np.float16)
    w = rng.uniform(-1, 1, (128, 64)).astype(np.float16)
    y = np.full((1, 64), np.nan, np.float32)
    gemv_twice_then_scale(x, w, y, config=RunConfig(platform=platform))
    np.testing.assert_allclose(y, x.astype(np.float32) @ w.astype(np.float32), rtol=1e-4, atol=1e-4)
