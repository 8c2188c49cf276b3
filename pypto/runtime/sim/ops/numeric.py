"""Numeric choices of the simulated vector unit, made once and commented where they are made.

- Float16 / BF16 / FP8 operands are computed in float32 and the result is rounded once to the
  tile's dtype (round-to-nearest-even, numpy's / ml_dtypes' conversion) — the vector unit's
  widening datapath gives the same single rounding for the elementwise ops.
- Integer arithmetic wraps (two's complement), as the hardware's integer ALUs do.
- Fresh GM memory is poison, never zeros (the one convention: pypto.runtime.sim.poison).
"""

from __future__ import annotations

import numpy as np



def _ml_dtypes():
    """ml_dtypes, imported on first need: its extension costs about a second, and a dtype of its
    ("V" kind) exists only once something else has loaded it."""
    import ml_dtypes
    return ml_dtypes

from pypto.ir.enums import PadValue


def is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt.kind == "f" or (dt.kind == "V" and _ml_finfo(dt) is not None)


def _ml_finfo(dt):
    try:
        return _ml_dtypes().finfo(dt)
    except (ValueError, TypeError):
        return None


def compute_dtype(dt) -> np.dtype:
    """The dtype arithmetic on `dt` runs in: float32 for every float narrower than 32 bits."""
    dt = np.dtype(dt)
    if is_float(dt) and dt.itemsize < 4:
        return np.dtype(np.float32)
    return dt


def widen(a: np.ndarray) -> np.ndarray:
    return a.astype(compute_dtype(a.dtype), copy=False)


def write_valid(out, value, valid=None) -> object:
    """Store `value` (any numeric dtype) into out's leading `valid` region, rounding once; set out.valid."""
    valid = tuple(int(v) for v in (value.shape if valid is None else valid))
    region = tuple(slice(0, v) for v in valid)
    with np.errstate(all="ignore"):
        out.data[region] = np.asarray(value).astype(out.data.dtype, copy=False)
    out.valid = valid
    return out


def scalar_as(value, dt):
    """A Python scalar operand, converted to the compute dtype of a `dt` operand."""
    return np.asarray(value).astype(compute_dtype(dt))[()]


def dtype_limits(dt) -> tuple:
    """(lowest, highest) finite values of a dtype."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min, info.max
    if dt.kind == "b":
        return False, True
    info = np.finfo(dt) if dt.kind == "f" else _ml_dtypes().finfo(dt)
    return info.min, info.max


def pad_scalar(pad: PadValue, dt):
    """The fill of PadValue: zero → 0; max / min → +inf / -inf for floats (so a max- or min-reduction
    ignores padding), the dtype's extreme for integers. None for PadValue.null (leave memory as is)."""
    if pad is None or pad is PadValue.null:
        return None
    if pad is PadValue.zero:
        return 0
    if is_float(dt):
        return np.inf if pad is PadValue.max else -np.inf
    lo, hi = dtype_limits(dt)
    return hi if pad is PadValue.max else lo


def fill_outside(data: np.ndarray, valid: tuple, value) -> None:
    """Write `value` everywhere in `data` outside the leading `valid` region (one slab per dim)."""
    if value is None:
        return
    for dim, v in enumerate(valid):
        index = tuple(slice(0, valid[d]) if d < dim else slice(None) for d in range(dim)) + (slice(int(v), None),)
        data[index] = value

