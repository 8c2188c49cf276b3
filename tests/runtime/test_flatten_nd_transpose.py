"""Rank > 2 transposes on the simulators (a2a3sim, a5sim) against numpy: the last two axes of a rank-3
tile, and axes 1 and 3 of a rank-4 tile whose axis 2 has size 1 — both run as a loop of 2-D
transposes over pages of the flattened tile (FlattenTileNdTo2D)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, run

PLATFORMS = ["a2a3sim", "a5sim"]


@pl.program
class LastTwo:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[3, 16, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[3, 32, 16], pl.FP32]]) -> pl.Tensor[[3, 32, 16], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [3, 16, 32])
        y = pl.tile.transpose(t, 1, 2)
        out2 = pl.store(y, [0, 0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[3, 16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 32, 16], pl.FP32]]) -> pl.Tensor[[3, 32, 16], pl.FP32]:
        out2 = self.k(x, out)
        return out2


@pl.program
class Axes13:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[2, 16, 1, 32], pl.FP32],
          out: pl.Out[pl.Tensor[[2, 32, 1, 16], pl.FP32]]) -> pl.Tensor[[2, 32, 1, 16], pl.FP32]:
        t = pl.load(x, [0, 0, 0, 0], [2, 16, 1, 32])
        y = pl.tile.transpose(t, 1, 3)
        out2 = pl.store(y, [0, 0, 0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 16, 1, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 32, 1, 16], pl.FP32]]) -> pl.Tensor[[2, 32, 1, 16], pl.FP32]:
        out2 = self.k(x, out)
        return out2


@pytest.mark.parametrize("platform", PLATFORMS)
def test_rank3_transpose_of_the_last_two_axes(platform):
    x = np.random.default_rng(4).standard_normal((3, 16, 32)).astype(np.float32)
    out = np.zeros((3, 32, 16), np.float32)
    run(LastTwo, x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.swapaxes(x, 1, 2))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_rank4_transpose_of_axes_1_and_3(platform):
    x = np.random.default_rng(5).standard_normal((2, 16, 1, 32)).astype(np.float32)
    out = np.zeros((2, 32, 1, 16), np.float32)
    run(Axes13, x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.swapaxes(x, 1, 3))
