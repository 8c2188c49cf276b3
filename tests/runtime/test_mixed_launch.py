"""Group launches: an Spmd wrapper over a mixed kernel keeps its blocks, each a Group on a cluster;
pipe rings persist across tasks on the same cluster."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.enums import FunctionType
from pypto.runtime import RunConfig, run

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])


@pl.jit
def spmd_mixed(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        i = pl.tile.get_block_idx()
        left = pl.move(pl.load(a, [i * 16, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        v = pl.move(pl.matmul(left, right), target_memory=pl.Mem.Vec)
        pl.store(pl.exp(v), [i * 16, 0], c)
    return c


@SIMS
def test_spmd_wrapper_is_kept_with_a_group_beneath(platform):
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    c = np.full((64, 16), np.nan, np.float32)
    lowered = spmd_mixed.lower(a, b, c, config=RunConfig(platform=platform))
    kinds = {f.name: f.func_type for f in lowered.functions.values()}
    assert kinds["spmd_mixed_spmd_0"] is FunctionType.Spmd and kinds["spmd_mixed_incore_0"] is FunctionType.Group
    spmd_mixed(a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, np.exp(a.astype(np.float32) @ b.astype(np.float32)), rtol=1e-5, atol=1e-6)


@pl.program
class Persist:
    """Task 1 pushes two tiles and consumes one; task 2 (same cluster, after task 1) pops the other."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube1(self, x: pl.Tensor[[32, 16], pl.FP32], out1: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v", peer_func="vec1")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        m0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(m0, split=0)
        m1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [16, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(m1, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec1(self, x: pl.Tensor[[32, 16], pl.FP32],
             out1: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        out1 = pl.store(t, [0, 0], out1)
        pl.system.tfree_to_aic(t)
        return out1

    @pl.function(type=pl.FunctionType.AIC)
    def cube2(self, prev: pl.Tensor[[16, 16], pl.FP32], out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v", peer_func="vec2")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)

    @pl.function(type=pl.FunctionType.AIV)
    def vec2(self, prev: pl.Tensor[[16, 16], pl.FP32],
             out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        out2 = pl.store(t, [0, 0], out2)
        pl.system.tfree_to_aic(t)
        return out2

    @pl.function(type=pl.FunctionType.Group)
    def g1(self, x: pl.Tensor[[32, 16], pl.FP32],
           out1: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube1(x, out1)
        r = self.vec1(x, out1)
        return r

    @pl.function(type=pl.FunctionType.Group)
    def g2(self, prev: pl.Tensor[[16, 16], pl.FP32],
           out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube2(prev, out2)
        r = self.vec2(prev, out2)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], out1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r1 = self.g1(x, out1)
        r2 = self.g2(r1, out2)
        return r2


@SIMS
def test_a_ring_keeps_its_slots_across_tasks_on_a_cluster(platform):
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out1 = np.full((16, 16), np.nan, np.float32)
    out2 = np.full((16, 16), np.nan, np.float32)
    run(Persist, x, out1, out2, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out1, x[:16])
    np.testing.assert_array_equal(out2, x[16:])
