"""Strict memory: reading a tile nobody wrote is reported with the op and the line.

On the chip a fresh buffer holds whatever the last kernel left there, so a kernel that reads
an uninitialised tile may pass a test by luck. The simulator fills fresh tiles with poison
(NaN for floats) so such reads show up, and `RunConfig(sim_strict_memory=True)` turns them
into a `SimulationError` naming the op, the operand and the user's line.

What it shows:
  - the bug: `pl.create_tile` gives memory, not values — it must be written before it is read;
  - default mode: the result is NaN; strict mode: an error at the offending `pl.add`;
  - the fix: a tile that is written when it is made (`pl.tile.full(shape, dtype=..., value=0.0)`).

Run:  python examples/utils/06_strict_memory.py
"""

import numpy as np

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.runtime import RunConfig


@pl.jit
def buggy(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        bias = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)    # never written
        pl.store(pl.add(t, bias), [0, 0], c)
    return c


@pl.jit
def fixed(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        bias = pl.tile.full([16, 64], dtype=pl.FP32, value=0.0)
        pl.store(pl.add(t, bias), [0, 0], c)
    return c


def main():
    x = np.ones((16, 64), np.float32)
    c = np.zeros_like(x)
    buggy(x, c, config=RunConfig())
    assert np.isnan(c).all(), "poisoned memory should make the bug visible"
    try:
        buggy(x, c, config=RunConfig(sim_strict_memory=True))
        raise AssertionError("strict mode should have reported the read")
    except SimulationError as err:
        assert "tile.add reads its operand 'rhs'" in str(err) and "06_strict_memory.py" in str(err)
    fixed(x, c, config=RunConfig(sim_strict_memory=True))
    np.testing.assert_array_equal(c, x)
    print("OK")


if __name__ == "__main__":
    main()
