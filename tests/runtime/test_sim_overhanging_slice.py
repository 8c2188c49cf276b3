"""A GM slice may run past the end of its tensor (a block-table window of the maximum unroll, of
which the kernel reads only the blocks that exist): the simulator keeps the part inside the tensor
as the view, and an access of the overhang is an error of the op that makes it."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.runtime import RunConfig, run
from pypto.runtime.sim.ops.tensor import read, slice_


def test_the_view_stops_at_the_extent_and_shares_memory():
    table = np.arange(16, dtype=np.int32)
    view = slice_(None, None, table, (8,), (12,))
    assert view.shape == (4,) and np.shares_memory(view, table)
    assert read(None, None, view, (3,)) == 15
    with pytest.raises(SimulationError, match="outside the tensor shape"):
        read(None, None, view, (5,))


def test_a_window_starting_outside_the_tensor_is_still_an_error():
    with pytest.raises(SimulationError, match="outside the extent"):
        slice_(None, None, np.zeros(16, np.int32), (4,), (17,))


def _program(reads: int):
    @pl.program
    class Gather:
        @pl.function(type=pl.FunctionType.InCore)
        def pick(self, idx: pl.Tensor[[8], pl.INT32], src: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for i in pl.range(reads):
                row = pl.read(idx, i)
                t = pl.load(src, [row, 0], [1, 16])
                out = pl.store(t, [i, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, table: pl.Tensor[[16], pl.INT32], src: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            for b in pl.range(1, 2):
                window = pl.slice(table, [8], [b * 12])    # 4 of its 8 entries exist
                out = self.pick(window, src, out)
            return out
    return Gather


def test_a_kernel_reading_only_the_existing_entries_runs():
    table = np.arange(16, dtype=np.int32)[::-1].copy()
    src = np.random.default_rng(3).standard_normal((16, 16)).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    run(_program(4), table, src, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_array_equal(out[:4], src[table[12:16]])


def test_a_kernel_reading_the_overhang_is_reported():
    table = np.zeros(16, dtype=np.int32)
    src = np.zeros((16, 16), np.float32)
    with pytest.raises(SimulationError, match="tensor.read"):
        run(_program(5), table, src, np.zeros((16, 16), np.float32), config=RunConfig(platform="a2a3sim"))
