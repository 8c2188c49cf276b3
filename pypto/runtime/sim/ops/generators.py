"""Numpy semantics of the generating ops (mirrors pypto/ir/ops/generators.py).

    tile.tri             1 where col <= row + diagonal (upper: col >= row + diagonal), 0 elsewhere, valid region only
    tile.random          Philox-4x32 words: the k-th group of four elements (row-major over the valid region)
                         takes counter + k; the model's choice of element order, deterministic in key and counter
    tile.fillpad_expand  x's valid region top-left, pad_value elsewhere (the result is fully valid)
    tensor.expand_clone  src broadcast to target's shape, in fresh GM memory
    tensor.no_dep        the tensor itself (a marker for the runtime)
"""

from __future__ import annotations

import numpy as np

from pypto.ir.enums import PadValue
from pypto.runtime.sim.ops.numeric import pad_scalar, write_valid


def tri(ctx, out, diagonal, shape, valid_shape=None, dtype=None, upper=False, **kwargs):
    rows, cols = (int(v) for v in (valid_shape if valid_shape is not None else out.data.shape))
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    mask = (j >= i + int(diagonal)) if upper else (j <= i + int(diagonal))
    return write_valid(out, mask.astype(out.data.dtype))


_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)      # Philox-4x32 multipliers
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)      # Weyl key increments
_LOW = np.uint64(0xFFFFFFFF)


def philox4x32(counters: np.ndarray, key0: int, key1: int, rounds: int) -> np.ndarray:
    """The Philox-4x32 block function on an [n, 4] uint32 counter array: [n, 4] uint32 words."""
    c = counters.astype(np.uint32).T.copy()
    k0, k1 = np.uint32(key0 & 0xFFFFFFFF), np.uint32(key1 & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        for _ in range(rounds):
            p0 = _M0 * c[0].astype(np.uint64)
            p1 = _M1 * c[2].astype(np.uint64)
            hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), (p0 & _LOW).astype(np.uint32)
            hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), (p1 & _LOW).astype(np.uint32)
            c = np.stack([hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0])
            k0, k1 = k0 + _W0, k1 + _W1
    return c.T


def random(ctx, out, key0, key1, counter0, counter1, counter2, counter3, shape, valid_shape=None, dtype=None,
           rounds=10, **kwargs):
    valid = tuple(int(v) for v in (valid_shape if valid_shape is not None else out.data.shape))
    n = int(np.prod(valid))
    groups = -(-n // 4)
    base = np.array([counter0, counter1, counter2, counter3], dtype=np.uint64) & _LOW
    counters = np.tile(base, (groups, 1))
    # add the group number to the 128-bit counter, carrying from word 0 upward
    carry = np.arange(groups, dtype=np.uint64)
    for w in range(4):
        total = counters[:, w] + carry
        counters[:, w] = total & _LOW
        carry = total >> np.uint64(32)
    words = philox4x32(counters, int(key0), int(key1), int(rounds)).reshape(-1)[:n]
    return write_valid(out, words.view(np.uint32).astype(np.uint32).view(out.data.dtype).reshape(valid))


def fillpad_expand(ctx, out, x, shape, pad_value=PadValue.zero, **kwargs):
    out.data[...] = pad_scalar(pad_value, out.data.dtype)
    out.data[x.region] = x.view()
    out.valid = out.data.shape
    return out


def expand_clone(ctx, out, src, target, **kwargs):
    return np.array(np.broadcast_to(src, target.shape))


def _same(ctx, out, tensor, **kwargs):
    return tensor


def table() -> dict:
    return {"tile.tri": tri, "tile.random": random, "tile.fillpad_expand": fillpad_expand,
            "tensor.expand_clone": expand_clone, "tensor.no_dep": _same}
