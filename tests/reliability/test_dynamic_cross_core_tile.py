"""A tile whose shape depends on a run-time value cannot cross between the cube and vector cores
(the pipe slot is sized at compile time): ExpandMixedKernel says so at the move, with a hint,
instead of failing inside the slot-size computation (found by the mutation fuzzer)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InternalError, UnsupportedError
from pypto.runtime import RunConfig


@pl.jit
def banded(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        i = pl.tile.get_block_idx()
        left = pl.move(pl.load(a, [i * 16, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(b, [0, 0], [32, i], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        v = pl.move(pl.matmul(left, right), target_memory=pl.Mem.Vec)
        pl.store(pl.mul(v, v), [i * 16, 0], c)
    return c


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_cross_core_tile_of_run_time_shape_is_refused_at_its_move(platform):
    bf16 = pl.BF16.to_numpy()
    a, b = np.ones((64, 32), bf16), np.ones((32, 16), bf16)
    with pytest.raises(UnsupportedError, match="needs a static shape") as info:
        banded(a, b, np.zeros((64, 16), np.float32), config=RunConfig(platform=platform))
    assert not isinstance(info.value, InternalError)
    assert "pl.move(pl.matmul(left, right)" in info.value.span.text
