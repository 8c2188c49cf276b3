"""Tensor versions one core side writes and the other reads, after the split (seed 004, Algorithm step 6:
"将悬空的 tile.store 结果变量……重映射到对应的输出参数"), and loops / branches only one side works in.

A loop whose every statement is cube work is left out of the vector kernel whole: its carried
tensor result is the cube's, so the vector side's readers get the parameter it writes. A vector
store inside a branch or loop that the cube reads back gives the cube the parameter, not a version
only the vector kernel binds.
"""

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.stmt import ForStmt, flatten_to_stmts
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run


def _expand(program, platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(program)))


@pl.program
class CubeLoopThenVector:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
          prod: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          wide: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for i in pl.range(2):
            xm = pl.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
            wm = pl.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
            z = pl.matmul(pl.move(xm, target_memory=pl.Mem.Left), pl.move(wm, target_memory=pl.Mem.Right))
            prod = pl.store(z, [0, 0], prod)
        xv = pl.load(x, [0, 0], [16, 64])
        xf = pl.tile.cast(xv, target_type=pl.FP32, mode="round")
        wide = pl.store(xf, [0, 0], wide)
        return prod

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
             prod: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             wide: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        prod = self.k(x, w, prod, wide)
        return prod


@pl.program
class CubeLoopThenVectorExpected:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
              prod: pl.Out[pl.Tensor[[16, 64], pl.FP32]], wide: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        for i, (cur,) in pl.range(2, init_values=(prod,)):
            xm: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
            wm: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
            z = pl.matmul(pl.move(xm, target_memory=pl.Mem.Left), pl.move(wm, target_memory=pl.Mem.Right))
            nxt = pl.store(z, [0, 0], cur)
            done = pl.yield_(nxt)

    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
              prod: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
              wide: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        xv: pl.Tile[[16, 64], pl.BF16, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 64])
        xf = pl.tile.cast(xv, target_type=pl.FP32, mode="round")
        wide_1 = pl.store(xf, [0, 0], wide)
        return prod                            # the cube loop's result is the parameter it wrote

    @pl.function(type=pl.FunctionType.Group)
    def k(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
          prod: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          wide: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        self.k_aic(x, w, prod, wide)
        self.k_aiv(x, w, prod, wide)
        return prod


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_vector_side_leaves_out_a_cube_only_loop_and_reads_its_parameter(platform):
    after = _expand(CubeLoopThenVector, platform)
    expected = passes.convert_to_ssa()(CubeLoopThenVectorExpected)
    for name in ("k_aic", "k_aiv", "k"):
        ir.assert_structural_equal(after.get_function(name), expected.get_function(name))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_cube_only_loop_kernel_matches_numpy(platform):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (16, 64)).astype(ml_dtypes.bfloat16)
    w = rng.uniform(-1, 1, (64, 64)).astype(ml_dtypes.bfloat16)
    prod = np.zeros((16, 64), np.float32)
    wide = np.zeros((16, 64), np.float32)
    run(CubeLoopThenVector, config=RunConfig(platform=platform))(x, w, prod, wide)
    np.testing.assert_allclose(prod, x.astype(np.float32) @ w.astype(np.float32), rtol=2e-2, atol=2e-2)
    np.testing.assert_array_equal(wide, x.astype(np.float32))


@pl.program
class VectorWritesCubeReads:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16], flag: pl.Scalar[pl.INT32],
          scratch: pl.Out[pl.Tensor[[16, 16], pl.FP16]],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        if flag == 0:
            a0 = pl.load(a, [0, 0], [16, 16])
            scratch = pl.store(pl.add(a0, a0), [0, 0], scratch)
        else:
            a1 = pl.load(a, [0, 0], [16, 16])
            scratch = pl.store(pl.mul(a1, a1), [0, 0], scratch)
        for i in pl.range(2):
            a2 = pl.load(a, [0, 0], [16, 16])
            scratch = pl.store(pl.sub(a2, a2), [0, 0], scratch)
        sm = pl.load(scratch, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        z = pl.matmul(pl.move(sm, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))
        zv = pl.move(z, target_memory=pl.Mem.Vec)
        out = pl.store(zv, [0, 0], out)
        return out


@pl.program
class VectorWritesCubeReadsCubeSide:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, a: pl.Tensor[[16, 16], pl.FP16], b: pl.Tensor[[16, 16], pl.FP16], flag: pl.Scalar[pl.INT32],
              scratch: pl.Out[pl.Tensor[[16, 16], pl.FP16]], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        sm: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.load(scratch, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        z = pl.matmul(pl.move(sm, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))
        pl.tile.tpush_to_aiv(z, split=0)


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_cube_reads_the_parameter_a_vector_branch_and_loop_wrote(platform):
    aic = _expand(VectorWritesCubeReads, platform).get_function("k_aic")
    assert not [s for s in flatten_to_stmts(aic.body) if isinstance(s, ForStmt)]   # the vector loop is gone
    expected = passes.convert_to_ssa()(VectorWritesCubeReadsCubeSide).get_function("k_aic")
    ir.assert_structural_equal(aic, expected)
    loads = [c for c in calls_in(aic.body) if c.op.name == "tile.load"]
    assert loads[0].args[0] is aic.params[3]


@pl.program
class FirstStepOnly:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        zero = pl.tile.full([16, 64], dtype=pl.FP32, value=0.0)
        for i, (acc,) in pl.range(3, init_values=(zero,)):
            if i == 0:
                xm = pl.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                wm = pl.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                prod = pl.matmul(pl.move(xm, target_memory=pl.Mem.Left), pl.move(wm, target_memory=pl.Mem.Right))
                pv = pl.move(prod, target_memory=pl.Mem.Vec)
                stepped = pl.tile.add(acc, pv)
                cur = pl.yield_(stepped)
            else:
                cur = pl.yield_(acc)
            res = pl.yield_(cur)
        out = pl.store(res, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(x, w, out)
        return out


@pl.program
class FirstStepOnlyCubeSide:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 64], pl.BF16],
              out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=4096, slot_num=2)
        for i in pl.range(3):
            if i == 0:
                xm: pl.Tile[[16, 64], pl.BF16, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 64], target_memory=pl.Mem.Mat)
                wm: pl.Tile[[64, 64], pl.BF16, pl.Mem.Mat] = pl.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
                prod = pl.matmul(pl.move(xm, target_memory=pl.Mem.Left), pl.move(wm, target_memory=pl.Mem.Right))
                pl.tile.tpush_to_aiv(prod, split=0)


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_cube_side_drops_a_vec_carry_its_branches_only_pass_on(platform):
    """The branch yields fall back to the Vec accumulator, but the cube kernel holds only cube and shared
    work (seed 004: "仅包含 Cube + 共享操作"): the carry and its Vec zero stay on the vector side."""
    after = _expand(FirstStepOnly, platform)
    expected = passes.convert_to_ssa()(FirstStepOnlyCubeSide).get_function("k_aic")
    ir.assert_structural_equal(after.get_function("k_aic"), expected)
    aiv_loop = [s for s in flatten_to_stmts(after.get_function("k_aiv").body) if isinstance(s, ForStmt)][0]
    assert len(aiv_loop.iter_args) == 1


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_first_step_kernel_matches_numpy(platform):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (16, 64)).astype(ml_dtypes.bfloat16)
    w = rng.uniform(-1, 1, (64, 64)).astype(ml_dtypes.bfloat16)
    got = np.zeros((16, 64), np.float32)
    run(FirstStepOnly, config=RunConfig(platform=platform))(x, w, got)
    np.testing.assert_allclose(got, x.astype(np.float32) @ w.astype(np.float32), rtol=2e-2, atol=2e-2)
