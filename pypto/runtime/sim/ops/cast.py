"""tile.cast rounding, one numpy expression per CastMode.

Float → integer: the value is rounded per mode in float64 (exact for every source float
format), NaN becomes 0 and out-of-range values saturate to the integer's limits — the
vector unit's conversions saturate rather than wrap.
Float → narrower float: the mode picks the neighbour in the target format (see `_to_float`).
Integer → integer keeps the low bits (two's complement wrap); integer → float rounds to
nearest-even (exact whenever the value fits).
"""

from __future__ import annotations

import numpy as np

from pypto.ir.enums import CastMode
from pypto.runtime.sim.ops.numeric import dtype_limits, is_float


def _round_float64(x: np.ndarray, mode: CastMode) -> np.ndarray:
    """Round float64 values to integral values per mode."""
    if mode in (CastMode.rint, CastMode.none, CastMode.odd):
        return np.rint(x)                                   # half to even (the hardware default rounding)
    if mode is CastMode.round:
        return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))   # half away from zero
    if mode is CastMode.floor:
        return np.floor(x)                                  # toward -inf
    if mode is CastMode.ceil:
        return np.ceil(x)                                   # toward +inf
    return np.trunc(x)                                      # trunc: toward zero


def _to_int(x: np.ndarray, dt: np.dtype, mode: CastMode) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        r = _round_float64(x.astype(np.float64), mode)
        lo, hi = dtype_limits(dt)
        r = np.clip(np.nan_to_num(r, nan=0.0), lo, hi)        # NaN → 0; saturate out of range
        return r.astype(dt)


def _to_float(x: np.ndarray, dt: np.dtype, mode: CastMode) -> np.ndarray:
    """Round to the float format `dt`: start from nearest-even, then move to the other neighbour
    where the mode asks for it (the exact value always lies between the two neighbours)."""
    with np.errstate(all="ignore"):
        near = x.astype(dt)
        if mode in (CastMode.rint, CastMode.none):
            return near                                      # half to even
        exact = x.astype(np.float64)
        got = near.astype(np.float64)
        toward = np.where(got > exact, -np.inf, np.inf).astype(dt)
        other = np.nextafter(near, toward)
        inexact = got != exact
        if mode is CastMode.floor:
            move = got > exact
        elif mode is CastMode.ceil:
            move = got < exact
        elif mode is CastMode.trunc:
            move = np.abs(got) > np.abs(exact)
        elif mode is CastMode.round:
            # a tie (exactly halfway) goes away from zero, everything else stays nearest
            tie = np.abs(other.astype(np.float64) - exact) == np.abs(got - exact)
            move = tie & inexact & (np.abs(other.astype(np.float64)) > np.abs(got))
        else:                                                # odd: an inexact result has an odd last bit
            bits = near.view(np.dtype(f"u{near.dtype.itemsize}"))
            move = inexact & (bits & 1 == 0)
        move &= np.isfinite(exact)
        return np.where(move, other, near).astype(dt)


def cast_array(x: np.ndarray, dt, mode: CastMode) -> np.ndarray:
    dt = np.dtype(dt)
    if is_float(x.dtype) and not is_float(dt) and dt.kind != "b":
        return _to_int(x, dt, mode)
    if is_float(x.dtype) and is_float(dt) and dt.itemsize < x.dtype.itemsize:
        return _to_float(x, dt, mode)
    with np.errstate(all="ignore"):
        return x.astype(dt)                                  # widening, int → float, int → int (wrap)
