"""The simulator's one poison convention: memory nobody wrote is never zero, so a missing write shows.

- Untyped on-chip memory (core arenas) is filled with 0xFF bytes: a NaN in every float format
  (FP32 / FP16 / BF16 / FP8), -1 in signed integers.
- Fresh GM buffers (tensor.create, Out arguments, device tensors) are typed: floats get 0xFF bytes
  (NaN), every other dtype 0x5A bytes, a value no kernel produces by accident.

    buf = poisoned((64, 64), np.float32)       # a new GM buffer
    poison(buf)                                # refill a reused one (pooled Out buffers)
    poison_bytes(arena)                        # on-chip bytes, whatever tiles they will hold
"""

from __future__ import annotations

import numpy as np

POISON_BYTE = 0xFF          # NaN in every float format
POISON_INT_BYTE = 0x5A      # integers, bools and other non-float dtypes

_FILL: dict = {}


def poison_byte(dtype) -> int:
    """The fill byte of a GM buffer of `dtype`."""
    byte = _FILL.get(dtype)
    if byte is None:
        byte = _FILL[dtype] = POISON_BYTE if _is_float(np.dtype(dtype)) else POISON_INT_BYTE
    return byte


def _is_float(dt: np.dtype) -> bool:
    if dt.kind == "f":
        return True
    if dt.kind != "V":
        return False
    import ml_dtypes                        # bfloat16 / float8 formats are numpy "V" dtypes
    try:
        ml_dtypes.finfo(dt)
        return True
    except (ValueError, TypeError):
        return False


def poison(arr: np.ndarray) -> np.ndarray:
    """Fill a GM buffer with its dtype's poison, in place."""
    if arr.size:
        arr.view(np.uint8).fill(poison_byte(arr.dtype))
    return arr


def poisoned(shape, dtype) -> np.ndarray:
    """A fresh GM buffer of `shape` / `dtype`, filled with poison."""
    return poison(np.empty(tuple(int(d) for d in shape), dtype=dtype))


def poison_bytes(buf: np.ndarray) -> None:
    """Fill untyped on-chip bytes (an arena or part of one) with 0xFF."""
    buf.fill(POISON_BYTE)
