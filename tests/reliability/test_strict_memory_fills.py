"""Strict memory mode reports reads of never-written tile bytes; an op that fills a tile from a scalar or a
vector (`pl.expands` on a fresh `pl.create_tile`, a plain row / col expand) does not read its target, so it
is not such a read (it was reported as one: a false positive)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.runtime import RunConfig


@pl.jit
def fill_then_add(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        z = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        z = pl.expands(z, 2.0)
        pl.store(pl.add(t, z), [0, 0], c)
    return c


@pl.jit
def add_unwritten(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        z = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pl.store(pl.add(t, z), [0, 0], c)
    return c


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_expands_on_a_fresh_tile_is_not_a_read(platform):
    a = np.ones((16, 64), np.float32)
    c = np.zeros_like(a)
    fill_then_add(a, c, config=RunConfig(platform=platform, sim_strict_memory=True))
    assert (c == 3.0).all()


def test_a_real_read_of_unwritten_bytes_is_still_reported():
    a = np.ones((16, 64), np.float32)
    with pytest.raises(SimulationError, match="no op has written"):
        add_unwritten(a, np.zeros_like(a), config=RunConfig(sim_strict_memory=True))
