"""Numpy semantics of the sorting ops (mirrors pypto/ir/ops/sort.py).

A sorted row is interleaved (value, index) pairs: FP32 values, the index words the raw bits of
sort32's idx operand. Sorting is by value, descending, stable (equal values keep their order,
and a merge takes the earlier run's element first). The FP16 pair layout is not modelled:
FP16 operands raise UnsupportedError rather than guess it.
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError, UnsupportedError
from pypto.runtime.sim.ops.numeric import write_valid


def _fp32(name: str, values: np.ndarray) -> None:
    if values.dtype != np.float32:
        raise UnsupportedError(f"{name} on {values.dtype} values is not simulated (the FP16 (value, index) pair "
                               "layout is not modelled)", hint="sort FP32 values: pl.cast to pl.FP32 first")


def _sorted_pairs(pairs: np.ndarray) -> np.ndarray:
    """[n, 2] float32 pairs ordered by value (column 0), descending and stable."""
    order = np.argsort(-pairs[:, 0], kind="stable")
    return pairs[order]


def sort32(ctx, out, src, idx, **kwargs):
    values = src.view()
    _fp32("tile.sort32", values)
    rows = values.reshape(-1, values.shape[-1])
    bits = np.ascontiguousarray(idx.data[src.region]).reshape(rows.shape).view(np.float32)
    result = np.empty((rows.shape[0], rows.shape[1] * 2), np.float32)
    for r in range(rows.shape[0]):
        for b in range(0, rows.shape[1], 32):
            pairs = np.stack([rows[r, b:b + 32], bits[r, b:b + 32]], axis=1)
            result[r, 2 * b:2 * b + 2 * pairs.shape[0]] = _sorted_pairs(pairs).reshape(-1)
    return write_valid(out, result.reshape(*values.shape[:-1], -1))


def mrgsort_format1(ctx, out, src, block_len, **kwargs):
    data = src.view()
    _fp32("tile.mrgsort_format1", data)
    run = int(block_len)
    if run <= 0 or run % 2:
        raise SimulationError(f"tile.mrgsort_format1: block_len {run} must be a positive even column count")
    rows = data.reshape(-1, data.shape[-1]).copy()
    for r in range(rows.shape[0]):
        for g in range(0, rows.shape[1], 4 * run):           # four runs merge into one
            group = rows[r, g:g + 4 * run]
            rows[r, g:g + group.shape[0]] = _sorted_pairs(group.reshape(-1, 2)).reshape(-1)
    return write_valid(out, rows.reshape(data.shape))


def mrgsort_format2(ctx, out, *srcs_and_tmp, exhausted=False, **kwargs):
    srcs = srcs_and_tmp[:-1]
    for s in srcs:
        _fp32("tile.mrgsort_format2", s.view())
    pairs = np.concatenate([np.ascontiguousarray(s.view()).reshape(-1, 2) for s in srcs])
    if pairs.size != out.data.size:
        raise SimulationError(f"tile.mrgsort_format2: the {pairs.shape[0]} merged pairs do not fill the "
                              f"{out.data.shape} result", hint="size tmp to hold every input pair")
    return write_valid(out, _sorted_pairs(pairs).reshape(out.data.shape))


def table() -> dict:
    return {"tile.sort32": sort32, "tile.mrgsort_format1": mrgsort_format1, "tile.mrgsort_format2": mrgsort_format2}
