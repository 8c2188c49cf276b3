"""Matmul operands reach the cube as Mat tiles (seed 003, MatmulSlice): slices of GM tensors, a_trans /
b_trans views and a Vec result moved to Mat all compute the right product on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, run

RNG = np.random.default_rng(11)


@pl.program
class SliceMatmulTrans:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 32], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_s: pl.Tensor[[32, 16], pl.FP32] = pl.slice(a, [32, 16], [16, 0])
            b_s: pl.Tensor[[32, 32], pl.FP32] = pl.slice(b, [32, 32], [0, 32])
            out = pl.assemble(out, pl.matmul(a_s, b_s, a_trans=True, b_trans=True), [0, 0])
        return out


@pl.program
class VecOperandTrans:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b0: pl.Tensor[[32, 32], pl.FP32],
             b1: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            bt = pl.add(b0, b1)
            out = pl.assemble(out, pl.matmul(a, bt, b_trans=True), [0, 0])
        return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_sliced_transposed_operands_match_numpy(platform):
    a, b = RNG.standard_normal((64, 32), dtype=np.float32), RNG.standard_normal((32, 64), dtype=np.float32)
    got = np.zeros((16, 32), np.float32)
    run(SliceMatmulTrans, config=RunConfig(platform=platform))(a, b, got)
    np.testing.assert_allclose(got, a[16:48, 0:16].T @ b[0:32, 32:64].T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_vec_operand_moved_to_mat_then_viewed_matches_numpy(platform):
    a = RNG.standard_normal((16, 32), dtype=np.float32)
    b0, b1 = RNG.standard_normal((32, 32), dtype=np.float32), RNG.standard_normal((32, 32), dtype=np.float32)
    got = np.zeros((16, 32), np.float32)
    run(VecOperandTrans, config=RunConfig(platform=platform))(a, b0, b1, got)
    np.testing.assert_allclose(got, a @ (b0 + b1).T, rtol=1e-4, atol=1e-4)


@pl.program
class NarrowedSliceKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16]) -> pl.Tensor[[16, 32], pl.FP32]:
        a_s: pl.Tensor[[16, 64], pl.FP16] = pl.slice(a, [16, 64], [0, 0])
        few: pl.Tensor[[16, 64], pl.FP16] = pl.set_validshape(a_s, 8, 64)
        y: pl.Tensor[[16, 32], pl.FP32] = pl.matmul(few, b, out_dtype=pl.FP32)
        return y


def test_a_slice_narrowed_by_set_validshape_loads_straight_into_mat():
    """The matmul's Mat demand reaches the slice through set_validshape: no Vec load, no move to Mat."""
    from pypto.passes import convert_tensor_to_tile_ops
    from tests.helpers import op_calls
    calls = op_calls(convert_tensor_to_tile_ops()(NarrowedSliceKernel)["k"])
    assert "tile.move" not in [c.op.name for c in calls]
    loads = [c for c in calls if c.op.name == "tile.load"]
    assert [c.kwargs["target_memory"] for c in loads] == [pl.Mem.Mat, pl.Mem.Mat]
    narrowed = next(c for c in calls if c.op.name == "tile.set_validshape")
    assert narrowed.type.memory_space is pl.Mem.Mat


@pl.program
class NarrowedSliceMatmul:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_s = pl.slice(a, [16, 64], [0, 0])
            few = pl.set_validshape(a_s, 8, 64)
            out = pl.assemble(out, pl.matmul(few, b, out_dtype=pl.FP32), [0, 0])
        return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.filterwarnings("ignore:output 'out' was not written")
def test_a_narrowed_mat_operand_multiplies_its_valid_rows(platform):
    a = RNG.uniform(-1, 1, (16, 64)).astype(np.float16)
    b = RNG.uniform(-1, 1, (64, 32)).astype(np.float16)
    got = np.full((16, 32), -7.0, np.float32)
    run(NarrowedSliceMatmul, config=RunConfig(platform=platform))(a, b, got)
    np.testing.assert_allclose(got[:8], a[:8].astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(got[8:], -7.0)           # rows outside the valid region are not written
