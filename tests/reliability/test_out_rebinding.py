"""An orchestration function that rebinds an `Out` parameter's name to a fresh tensor and returns it:
the caller's array receives that value (it used to stay NaN, a silent wrong answer)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig, run

EXPAND = """
import pypto.language as pl

@pl.program
class T:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, g: pl.Tensor[[1, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = pl.expand_clone(g, out)
        return out
"""

PLATFORMS = ["a2a3sim", "a5sim"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_expand_clone_rebound_to_out_reaches_the_caller(platform):
    g = np.arange(32, dtype=np.float32).reshape(1, 32)
    out = np.full((16, 32), -7.0, np.float32)
    result = run(pl.parse(EXPAND), config=RunConfig(platform=platform))(g, out)
    assert result is None
    np.testing.assert_array_equal(out, np.broadcast_to(g, (16, 32)))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_return_style_gets_the_rebound_value(platform):
    g = np.arange(32, dtype=np.float32).reshape(1, 32)
    got = run(pl.parse(EXPAND), config=RunConfig(platform=platform))(g)
    np.testing.assert_array_equal(got, np.broadcast_to(g, (16, 32)))


@pl.jit
def add_rebound(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    fresh = pl.create_tensor([64, 128], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.add(pl.load(a, [0, 0], [64, 128]), pl.load(b, [0, 0], [64, 128]))
        fresh = pl.store(t, [0, 0], fresh)
    out = fresh
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_tensor_op_rebound_to_out_reaches_the_caller(platform):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((64, 128)).astype(np.float32)
    out = np.zeros((64, 128), np.float32)
    add_rebound(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
