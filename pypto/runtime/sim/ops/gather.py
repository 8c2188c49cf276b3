"""Numpy semantics of the gather / scatter tile ops (mirrors pypto/ir/ops/gather.py).

    tile.ci          dst[0, k] = start + k (or start - k)
    tile.scatter     dst.flat[indexes[i, j]] = src[i, j]; dst's other slots are kept (the reference's
                     tile.scatter is DPS: dst is read-write and unindexed slots pass through);
                     two source elements with one index: the later one (row-major) wins
    tile.gather_row  one GM window copied into a sub-region of the destination tile, in place

tile.scatter_update (ConvertTensorToTileOps) and the AIV boundary ops tile.aiv_shard /
tile.aic_gather (ExpandMixedKernel folds them into cross-core pipe transfers) are lowered
before the simulator runs; reaching it un-lowered is reported, naming the pass.
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.runtime.sim.out_coverage import note_load


def ci(ctx, out, start, shape, dtype=None, descending=False, **kwargs):
    n = out.data.shape[-1]
    step = -1 if descending else 1
    row = int(start) + step * np.arange(n, dtype=np.int64)
    out.data[...] = 0
    out.data.reshape(-1, n)[0] = row.astype(out.data.dtype)
    out.valid = out.data.shape
    return out


def _in_place(out, dst):
    """DPS ops write into dst's buffer; when the planner gave the result its own, start from dst's bytes."""
    if out.data is not dst.data and not np.shares_memory(out.data, dst.data):
        out.data[...] = dst.data
    out.valid = dst.valid
    return out


def scatter(ctx, out, dst, src, indexes, **kwargs):
    target = _in_place(out, dst)
    idx = indexes.view().astype(np.int64).ravel()
    flat = target.data.reshape(-1)
    rows, cols = target.valid[0], target.data.shape[-1]
    limit = (rows - 1) * cols + target.valid[-1]
    bad = idx[(idx < 0) | (idx >= limit)]
    if bad.size:
        raise SimulationError(f"tile.scatter: flat index {int(bad[0])} is outside the destination's "
                              f"{rows} x {target.valid[-1]} valid region",
                              hint="each index is row * columns + column of a destination element")
    values = src.view().ravel().astype(flat.dtype, copy=False)
    # pto.tscatter resolves a repeated index in ascending element order: the last writer wins.
    # numpy's fancy assignment does not promise an order, so pick each index's last occurrence.
    last = len(idx) - 1 - np.unique(idx[::-1], return_index=True)[1]
    flat[idx[last]] = values[last]
    return target


def gather_row(ctx, out, dst, src, dst_offset, src_offset, shapes, valid_shape=None, transpose=False, **kwargs):
    target = _in_place(out, dst)
    extent = tuple(int(v) for v in (valid_shape if valid_shape is not None else shapes))
    so = tuple(int(o) for o in src_offset)
    for d, (o, e, n) in enumerate(zip(so, extent, src.shape)):
        if o < 0 or o + e > n:
            raise SimulationError(f"tile.gather_row: source dim {d} window [{o}, {o + e}) is outside the extent {n}",
                                  hint="check the block table and the gathered indices")
    if isinstance(src, np.ndarray):
        note_load(src)
    window = src[tuple(slice(o, o + e) for o, e in zip(so, extent))]
    if transpose:
        window = window.T
    do = tuple(int(o) for o in dst_offset)
    for d, (o, e, n) in enumerate(zip(do, window.shape, target.data.shape)):
        if o < 0 or o + e > n:
            raise SimulationError(f"tile.gather_row: destination dim {d} region [{o}, {o + e}) is outside the "
                                  f"tile extent {n}", hint="dst_offset + valid_shape must stay within dst.shape")
    region = tuple(slice(o, o + e) for o, e in zip(do, window.shape))
    target.data[region] = window.astype(target.data.dtype, copy=False)
    return target


def _lowered_by(pass_name: str):
    def op(ctx, out, *args, **kwargs):
        raise SimulationError(f"an op that {pass_name} lowers reached the simulator un-lowered",
                              hint="run the Default pipeline before simulating")
    return op


def table() -> dict:
    return {"tile.ci": ci, "tile.scatter": scatter, "tile.gather_row": gather_row,
            "tile.scatter_update": _lowered_by("ConvertTensorToTileOps"),
            "tile.aiv_shard": _lowered_by("ExpandMixedKernel"), "tile.aic_gather": _lowered_by("ExpandMixedKernel")}


