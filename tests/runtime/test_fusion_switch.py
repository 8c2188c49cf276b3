"""fused_blocks.ENABLED, the internal switch bench/sim_throughput.py generates its per-task reference with:
off, a kernel generated from then on runs its load / load / op / store blocks through the ops one by one,
with the same result; kernels generated before keep their fused code."""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.runtime.sim import fused_blocks


def _kernel():
    @pl.jit
    def blocked(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                ta = pl.load(a, [i * 8, 0], [8, 64])
                tb = pl.load(b, [i * 8, 0], [8, 64])
                pl.store(pl.sub(ta, tb), [i * 8, 0], c)
        return c
    return blocked


def _run(fn):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((32, 64), dtype=np.float32), rng.standard_normal((32, 64), dtype=np.float32)
    c = np.zeros_like(a)
    fn(a, b, c, config=RunConfig())
    np.testing.assert_array_equal(c, a - b)
    sim = fn.compile(a, b, c).sim
    return [code.source for code in sim.functions.values() if code.func.func_type.name != "Orchestration"]


def test_kernels_generated_with_the_switch_off_are_not_fused(monkeypatch):
    fused = _run(_kernel())
    assert any("_fx_run(" in s for s in fused)
    monkeypatch.setattr(fused_blocks, "ENABLED", False)
    plain = _run(_kernel())
    assert plain and not any("_fx_" in s for s in plain)


def test_a_kernel_binds_its_tiles_once_per_launch_fused_or_not(monkeypatch):
    """The prologue asks for the core's views (which also poisons the kernel's memory) once: the fused
    kernel's `_sim_fx` line once made the unfused one's prologue ask twice."""
    for enabled in (True, False):
        monkeypatch.setattr(fused_blocks, "ENABLED", enabled)
        for source in _run(_kernel()):
            assert source.count("_sim_ctx.views(_sim_F)") == 1
