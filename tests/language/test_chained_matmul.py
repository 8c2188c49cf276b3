"""A matmul whose operand is the on-chip (Acc) result of an earlier matmul: the compiler moves it
Acc → Mat (the FIXPIPE writeback) and feeds the cube again; numpy-equal on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def chained(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, d: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        cb = pl.matmul(a, b, out_dtype=pl.FP32)
        d = pl.assemble(d, pl.matmul(cb, e, out_dtype=pl.FP32), [0, 0])
    return d


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_matmul_of_a_matmul_result(platform):
    rng = np.random.default_rng(9)
    a = rng.uniform(-1, 1, (32, 64)).astype(np.float32)
    b = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    e = rng.uniform(-1, 1, (32, 16)).astype(np.float32)
    d = np.full((32, 16), np.nan, np.float32)
    lowered = chained.lower(a, b, e, d, config=RunConfig(platform=platform))
    moves = [s.value for f in lowered.functions.values() for s in getattr(f.body, "stmts", ())
             if getattr(getattr(s, "value", None), "op", None) is not None
             and getattr(s.value.op, "name", "") == "tile.move"]
    assert any(m.args[0].type.memory_space is pl.Mem.Acc for m in moves)
    chained(a, b, e, d, config=RunConfig(platform=platform))
    np.testing.assert_allclose(d, (a @ b) @ e, rtol=1e-4, atol=1e-4)
