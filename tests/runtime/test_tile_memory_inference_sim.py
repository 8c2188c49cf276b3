"""InferTileMemorySpace on the simulator: tile kernels whose spaces the pass resolves match numpy
(a stated Vec load behind a transpose_view feeding the cube stays Vec and is handed across, as in
the reference; an accumulator carried from a Vec tile.create runs as a pure cube kernel)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, run

M = pl.Mem
SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
rng = np.random.default_rng(17)


@pl.program
class TransposedRight:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, 0], [32, 32], [32, 32], target_memory=M.Mat)
        tb: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.load(b, [0, 0], [32, 32], [32, 32])
        tbt: pl.Tile[[32, 32], pl.FP32, M.Vec] = pl.tile.transpose_view(tb)
        tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
        tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tbt, target_memory=M.Right)
        c: pl.Tile[[32, 32], pl.FP32, M.Acc] = pl.tile.matmul(tl, tr)
        r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y: pl.Tensor[[32, 32], pl.FP32] = self.k(a, b, out)
        return y


@pl.program
class AccumulateK:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        acc0: pl.Tile[[32, 32], pl.FP32] = pl.tile.create([32, 32], dtype=pl.FP32)
        for kk, (acc,) in pl.range(0, 128, 32, init_values=(acc0,)):
            ta: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(a, [0, kk], [32, 32], [32, 32], target_memory=M.Mat)
            tb: pl.Tile[[32, 32], pl.FP32, M.Mat] = pl.tile.load(b, [kk, 0], [32, 32], [32, 32], target_memory=M.Mat)
            tl: pl.Tile[[32, 32], pl.FP32, M.Left] = pl.tile.move(ta, target_memory=M.Left)
            tr: pl.Tile[[32, 32], pl.FP32, M.Right] = pl.tile.move(tb, target_memory=M.Right)
            acc2: pl.Tile[[32, 32], pl.FP32] = pl.tile.matmul_acc(acc, tl, tr, kk == 0)
            acc_rv = pl.yield_(acc2)
        r: pl.Tensor[[32, 32], pl.FP32] = pl.tile.store(acc_rv, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y: pl.Tensor[[32, 32], pl.FP32] = self.k(a, b, out)
        return y


@SIMS
def test_a_stated_vec_load_behind_a_transpose_view_feeding_right_is_handed_to_the_cube(platform):
    a, b = (rng.uniform(-1, 1, (32, 32)).astype(np.float32) for _ in range(2))
    out = np.full((32, 32), np.nan, np.float32)
    compiled = run(TransposedRight, a, b, out, config=RunConfig(platform=platform))
    assert compiled.lowered["k"].func_type is pl.FunctionType.Group      # a vector half loads b
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-5, atol=1e-5)


@SIMS
def test_an_accumulator_carried_from_a_vec_create_runs_as_a_pure_cube_kernel(platform):
    a = rng.uniform(-1, 1, (32, 128)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 32)).astype(np.float32)
    out = np.full((32, 32), np.nan, np.float32)
    compiled = run(AccumulateK, a, b, out, config=RunConfig(platform=platform, sim_strict_memory=True))
    assert compiled.lowered["k"].func_type is pl.FunctionType.AIC
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
