"""@pl.jit.host: the reference's 04_barrier example (hand-rolled and builtin) on 2 simulated ranks."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import DistributedCompiledProgram, RunConfig

from tests.distributed import jit_barrier_example as ex

CONFIG = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1], num_sub_workers=0))


def test_jit_host_handrolled_barrier():
    y = np.zeros((2, 2, 1), np.int32)
    compiled = ex.barrier_program_hand.compile(y, config=CONFIG)
    assert isinstance(compiled, DistributedCompiledProgram)
    compiled(y, config=CONFIG)
    np.testing.assert_array_equal(y[..., 0], [[0, 1], [1, 0]])


@pytest.mark.parametrize("seed", [None, 3])
def test_jit_host_builtin_barrier_shift(seed):
    x = np.random.default_rng(0).standard_normal((2, 1, 64)).astype(np.float32)
    y = np.zeros_like(x)
    cfg = CONFIG if seed is None else RunConfig(distributed_config=CONFIG.distributed_config, sim_schedule="random",
                                                sim_seed=seed)
    ex.barrier_program_builtin(x, y, config=cfg)
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))


def test_jit_host_rejects_level():
    with pytest.raises(TypeError, match="level"):
        pl.jit.host(lambda: None, level=pl.Level.HOST)
