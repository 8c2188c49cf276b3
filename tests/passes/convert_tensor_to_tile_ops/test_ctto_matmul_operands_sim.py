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
