"""Numpy semantics of gather / scatter by index, mask and byte block (mirrors pypto/ir/ops/gather_index.py).

Indices are checked: an index outside its source raises SimulationError (the hardware's result
is undefined), except where mgather's gather_oob says clamp / wrap / zero.
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.ops.gather_index import COALESCE, GATHER_OOB, mask_columns
from pypto.runtime.sim.ops.numeric import write_valid
from pypto.runtime.sim.out_coverage import note_load


def _checked(name: str, index: np.ndarray, n: int, what: str) -> np.ndarray:
    index = index.astype(np.int64)
    bad = (index < 0) | (index >= n)
    if bad.any():
        raise SimulationError(f"{name}: index {int(index[bad][0])} is outside {what} ({n} entries)",
                              hint="indices address the source row-major from 0")
    return index


def gather(ctx, out, src, indices, tmp, **kwargs):
    flat = src.data.reshape(-1)
    return write_valid(out, flat[_checked("tile.gather", indices.view(), flat.size, "src")])


def gather_mask(ctx, out, src, mask_pattern=1, output_dtype=None, **kwargs):
    cols = mask_columns(int(mask_pattern), src.data.shape[-1])
    kept = [c for c in cols if c < src.valid[-1]]
    picked = np.ascontiguousarray(src.data[..., kept][tuple(slice(0, v) for v in src.valid[:-1])])
    return write_valid(out, picked.view(out.data.dtype))


def scatter_mask(ctx, out, dst, src, mask_pattern=1, **kwargs):
    """Row i of src fills the kept columns of row i of the result, in order; every other element is 0
    (pto.tscatter's mask form zero-fills its destination)."""
    cols = mask_columns(int(mask_pattern), dst.data.shape[-1])
    result = np.zeros_like(out.data)
    rows, width = src.valid
    result[:rows, cols[:width]] = src.data[:rows, :width].astype(result.dtype, copy=False)
    out.data[...] = result
    out.valid = dst.valid
    return out


def gatherb(ctx, out, src, offset, output_dtype=None, **kwargs):
    raw = np.ascontiguousarray(src.data).reshape(-1).view(np.uint8)
    offs = offset.view().astype(np.int64)
    if (offs % 32).any() or (offs < 0).any() or (offs + 32 > raw.size).any():
        raise SimulationError(f"tile.gatherb: byte offsets must be 32-byte aligned blocks inside src ({raw.size} "
                              "bytes)")
    blocks = raw[offs[..., None] + np.arange(32)]               # [..., cols, 32] bytes
    per_row = blocks.reshape(*offs.shape[:-1], -1)
    return write_valid(out, per_row.view(out.data.dtype))


def _oob(name: str, index: np.ndarray, n: int, mode: int):
    """Apply mgather's out-of-bounds policy; returns (index, keep mask)."""
    index = index.astype(np.int64)
    if GATHER_OOB[mode] == "clamp":
        return np.clip(index, 0, n - 1), None
    if GATHER_OOB[mode] == "wrap":
        return np.mod(index, n), None
    if GATHER_OOB[mode] == "zero":
        inside = (index >= 0) & (index < n)
        return np.where(inside, index, 0), inside
    return _checked(name, index, n, "mem"), None


def _mode(value, names) -> int:
    return names.index(value) if isinstance(value, str) else int(value)


def mgather(ctx, out, mem, idx, coalesce="row", gather_oob="undefined", target_memory=None, **kwargs):
    oob = _mode(gather_oob, GATHER_OOB)
    note_load(mem)
    index = idx.view()
    if _mode(coalesce, COALESCE) == 1:
        flat = mem.reshape(-1)
        where, inside = _oob("tile.mgather", index, flat.size, oob)
        values = flat[where]
        if inside is not None:
            values = np.where(inside, values, 0)
        return write_valid(out, values)
    rows = index.reshape(-1)
    table = mem.reshape(-1, mem.shape[-1])
    where, inside = _oob("tile.mgather", rows, table.shape[0], oob)
    values = table[where]
    if inside is not None:
        values = np.where(inside[:, None], values, 0)
    return write_valid(out, values)


def mscatter(ctx, out, src, idx, output_tensor, **kwargs):
    where = _checked("tile.mscatter", idx.view(), output_tensor.size, "output_tensor")
    output_tensor[np.unravel_index(where, output_tensor.shape)] = src.view().astype(output_tensor.dtype)
    return output_tensor


def tensor_gather(ctx, out, input, dim, index, **kwargs):
    axis = int(dim) % input.ndim
    _checked("tensor.gather", index, input.shape[axis], f"input dim {axis}")
    return np.take_along_axis(input, index.astype(np.int64), axis=axis)


def tensor_scatter(ctx, out, input, dim, index, src, **kwargs):
    axis = int(dim) % input.ndim
    _checked("tensor.scatter", index, input.shape[axis], f"input dim {axis}")
    result = np.array(input)
    values = src[tuple(slice(0, n) for n in index.shape)]
    np.put_along_axis(result, index.astype(np.int64), values.astype(result.dtype), axis=axis)
    return result


def table() -> dict:
    return {"tile.gather": gather, "tile.gather_mask": gather_mask, "tile.scatter_mask": scatter_mask, "tile.gatherb": gatherb, "tile.mgather": mgather,
            "tile.mscatter": mscatter, "tensor.gather": tensor_gather, "tensor.scatter": tensor_scatter}
