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


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# an Out argument's private buffer: a NaN (floats) that differs from the on-chip 0xFF poison, so a kernel
# storing never-written tile bytes still counts as having written them
_OUT_FLOAT_PATTERN = {1: 0x7F, 2: 0x7FA5, 4: 0x7FA5A5A5, 8: 0x7FF5A5A5A5A5A5A5}


def _out_pattern(dtype):
    """(unsigned view dtype, bit pattern) of an Out buffer's poison, or None for odd item sizes."""
    got = _PATTERNS.get(dtype, _MISSING)          # an array's dtype (the usual caller): no np.dtype() call
    if got is _MISSING:
        dt = np.dtype(dtype)
        got = _PATTERNS[dt] = _pattern_of(dt)
    return got


_PATTERNS: dict = {}
_MISSING = object()


def _pattern_of(dt: np.dtype):
    uint = _UINT.get(dt.itemsize)
    if uint is None:
        return None
    if poison_byte(dt) == POISON_BYTE:
        return uint, uint(_OUT_FLOAT_PATTERN[dt.itemsize])
    return uint, uint(int.from_bytes(bytes([POISON_INT_BYTE]) * dt.itemsize, "little"))


def poison_output(arr: np.ndarray) -> np.ndarray:
    """Fill an Out argument's private buffer with poison that `unwritten_mask` can find again."""
    pattern = _out_pattern(arr.dtype)
    if pattern is None or not arr.flags.c_contiguous:
        return poison(arr)
    if arr.size:
        arr.view(pattern[0]).fill(pattern[1])
    return arr


def unwritten_mask(buf: np.ndarray):
    """Where an Out buffer filled by `poison_output` still holds that poison (a bool array), or None when
    every element was written."""
    pattern = _out_pattern(buf.dtype)
    if pattern is None or not buf.size or not buf.flags.c_contiguous:
        return None
    mask = np.equal(buf.view(pattern[0]), pattern[1])
    return mask if np.count_nonzero(mask) else None      # (count_nonzero: no Python-level `any` wrapper)


COPY_CHUNK = 1 << 18          # elements per step of `copy_if_written` (1 MiB of FP32: stays in cache)


def copy_if_written(user: np.ndarray, buf: np.ndarray) -> bool:
    """Copy an Out buffer filled by `poison_output` into the caller's array, a chunk at a time, checking
    each chunk for poison just before copying it (one pass over memory instead of a scan and a copy).
    True when every element was written and all was copied; False, with nothing or only poison-free
    chunks copied (bytes the masked copy of `unwritten_mask` writes too), when some element still holds
    poison or the arrays do not allow it (dtypes differ, not C-contiguous, an ndarray subclass, no pattern)."""
    pattern = _out_pattern(buf.dtype)
    if (pattern is None or user.__class__ is not np.ndarray or user.dtype != buf.dtype or not buf.flags.c_contiguous
            or not user.flags.c_contiguous or user.shape != buf.shape):
        return False
    if buf.size <= COPY_CHUNK:                 # one chunk: no flat views needed
        if np.count_nonzero(np.equal(buf.view(pattern[0]), pattern[1])):
            return False
        user[...] = buf
        return True
    bits, dst, src = buf.reshape(-1).view(pattern[0]), user.reshape(-1), buf.reshape(-1)
    for lo in range(0, bits.size, COPY_CHUNK):
        hi = lo + COPY_CHUNK
        if np.count_nonzero(np.equal(bits[lo:hi], pattern[1])):
            return False
        dst[lo:hi] = src[lo:hi]
    return True


def warn_unwritten(name: str, mask: np.ndarray) -> None:
    """A PyptoWarning at the caller's line: an Out parameter the kernel left (partly) unwritten."""
    import warnings

    from pypto.call_site import user_call_span
    from pypto.errors import PyptoWarning
    n, total = int(mask.sum()), mask.size
    if n == total:
        what = "was never written by the kernel"
    else:
        box = ", ".join(f"{int(idx.min())}:{int(idx.max()) + 1}" for idx in np.nonzero(mask))
        what = f"was not written by the kernel in {n} of {total} elements (within [{box}])"
    span = user_call_span()
    warnings.warn_explicit(f"output '{name}' {what}; the caller's values there are kept",
                           PyptoWarning, span.filename or "<pypto>", span.line or 0)
