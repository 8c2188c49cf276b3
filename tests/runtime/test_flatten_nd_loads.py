"""Rank > 2 GM windows on the simulators (a2a3sim, a5sim) against numpy: FlattenTileNdTo2D loads each
window straight into its [prod(leading), last] tile and stores it back through the N-D window —
a strided window (not contiguous in the leading dims), a partial last dim, and a partial leading dim
that is a prefix of rows. Stores write only the valid region: the rest of `out` keeps its values."""

import re

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, run

PLATFORMS = ["a2a3sim", "a5sim"]


@pl.program
class StridedWindow:
    """out[2:4, 0:8, :] = exp(x[1:3, 4:12, :]) + 1: each window row pair skips rows of the tensor."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16, 32], pl.FP32],
          out: pl.InOut[pl.Tensor[[4, 16, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 32], pl.FP32]:
        t = pl.load(x, [1, 4, 0], [2, 8, 32])
        y = pl.tile.adds(pl.tile.exp(t), 1.0)
        out2 = pl.store(y, [2, 0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16, 32], pl.FP32],
             out: pl.InOut[pl.Tensor[[4, 16, 32], pl.FP32]]) -> pl.Tensor[[4, 16, 32], pl.FP32]:
        out2 = self.k(x, out)
        return out2


@pl.program
class PartialLastDim:
    """Only columns 0..19 of each row are valid: out[:, :, :20] = x * 2, out[:, :, 20:] untouched."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
          out: pl.InOut[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 16, 32], valid_shape=[2, 16, 20])
        y = pl.tile.muls(t, 2.0)
        out2 = pl.store(y, [0, 0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
             out: pl.InOut[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        out2 = self.k(x, out)
        return out2


@pl.program
class PartialLeadingDim:
    """valid [1, 9, 32] of a [2, 16, 32] tile: the first 9 rows of the flattened [32, 32] tile."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
          out: pl.InOut[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        t = pl.load(x, [1, 0, 0], [2, 16, 32], valid_shape=[1, 9, 32])
        y = pl.tile.neg(t)
        out2 = pl.store(y, [0, 4, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 16, 32], pl.FP32],
             out: pl.InOut[pl.Tensor[[2, 16, 32], pl.FP32]]) -> pl.Tensor[[2, 16, 32], pl.FP32]:
        out2 = self.k(x, out)
        return out2


@pytest.mark.parametrize("platform", PLATFORMS)
def test_strided_rank3_window_round_trips(platform):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 16, 32)).astype(np.float32)
    out = np.full((4, 16, 32), 7.0, np.float32)
    want = out.copy()
    want[2:4, 0:8, :] = np.exp(x[1:3, 4:12, :]) + 1
    run(StridedWindow, x, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, want, rtol=1e-5)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_partial_last_dim_writes_only_valid_columns(platform):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 16, 32)).astype(np.float32)
    out = np.full((2, 16, 32), -3.0, np.float32)
    want = out.copy()
    want[:, :, :20] = x[:, :, :20] * 2
    run(PartialLastDim, x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_partial_leading_dim_writes_only_the_valid_rows(platform):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 32)).astype(np.float32)
    out = np.full((2, 16, 32), 5.0, np.float32)
    want = out.copy()
    want[0:1, 4:13, :] = -x[1:2, 0:9, :]
    run(PartialLeadingDim, x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, want)


def test_pto_reads_and_writes_the_nd_window_with_2d_tiles_and_no_reshape():
    from pypto import ir
    from pypto.codegen.pto import generate
    text = generate(ir.compile(StridedWindow).lowered)["k"]
    assert "pto.treshape" not in text
    tile = r"!pto\.tile_buf<loc=vec, dtype=f32, rows=16, cols=32"
    assert re.search(r"pto\.tload ins\(%\w+ : !pto\.partition_tensor_view<2x8x32xf32>\) outs\(%\w+ : " + tile, text)
    assert re.search(r"pto\.tstore ins\(%\w+ : " + tile + r".*outs\(%\w+ : !pto\.partition_tensor_view<2x8x32xf32>\)",
                     text)


@pl.program
class MixedWithNdLoad:
    """A cube + vector kernel (dual-dispatched on a2a3: lane 1 replays the loads with empty extents)
    whose vector side loads a rank-3 window: out = a @ b + x.reshape(16, 16)."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32], x: pl.Tensor[[2, 8, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        l = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        r = pl.move(pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        cv = pl.move(pl.matmul(l, r), target_memory=pl.Mem.Vec)
        t2 = pl.tile.reshape(pl.load(x, [0, 0, 0], [2, 8, 16]), [16, 16])
        o = pl.store(pl.tile.add(cv, t2), [0, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32], x: pl.Tensor[[2, 8, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(a, b, x, out)
        return o


@pytest.mark.parametrize("platform", PLATFORMS)
def test_flattened_load_on_the_vector_side_of_a_mixed_kernel(platform):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((16, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)
    x = rng.standard_normal((2, 8, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    run(MixedWithNdLoad, a, b, x, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a @ b + x.reshape(16, 16), rtol=1e-4, atol=1e-4)


@pl.jit
def split_with_rank3_window(a: pl.Tensor, b: pl.Tensor, x: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        z = pl.matmul(a, b, out_dtype=pl.FP32)
        c = pl.assemble(c, pl.exp(z), [0, 0])
        d = pl.assemble(d, pl.exp(x), [0, 0, 0])
    return c, d


def test_pl_split_of_a_kernel_with_a_rank3_window_is_a_named_error():
    from pypto.errors import UnsupportedError
    a, b = np.zeros((16, 32), np.float16), np.zeros((32, 16), np.float16)
    x, c, d = np.zeros((2, 8, 16), np.float32), np.zeros((16, 16), np.float32), np.zeros((2, 8, 16), np.float32)
    with pytest.raises(UnsupportedError, match=r"pl.split\(UP_DOWN\): tile.load reads or writes a rank > 2 GM window"):
        split_with_rank3_window(a, b, x, c, d, config=RunConfig(platform="a5sim"))
