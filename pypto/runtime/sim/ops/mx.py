"""Numpy semantics of the MX quantization primitives (mirrors pypto/ir/ops/tile_mx.py).

OCP Microscaling (MX v1.0), MXFP8 E4M3: per group of 32 elements, with amax = max |x| of the
group, the shared exponent is e = floor(log2(amax)) - 8 (8 = the largest exponent of E4M3,
so the largest element lands in [256, 512)), stored as the E8M0 byte e + 127 clamped to
[0, 254]; an all-zero group gets byte 0. Each element is x / 2^e rounded to E4M3 (nearest
even), saturating at ±448 (E4M3 has no infinity). A group holding NaN gets the NaN scale byte
0xFF. The computation runs in float64 on the source values, so it is exact before the one
rounding to FP8.
"""

from __future__ import annotations

import numpy as np

from pypto.ir.dtypes import FP8E4M3FN
from pypto.runtime.sim.ops.numeric import write_valid
from pypto.runtime.sim.values import TileValue

GROUP = 32
E4M3_EMAX = 8
E4M3_MAX = 448.0


def mx_quantize_groups(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """groups [..., 32] → (E4M3 bytes [..., 32] as int8, E8M0 bytes [...] as uint8)."""
    x = groups.astype(np.float64)
    with np.errstate(all="ignore"):
        amax = np.max(np.abs(x), axis=-1)
        e = np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - E4M3_EMAX
        biased = np.where(amax > 0, np.clip(e + 127, 0, 254), 0)
        has_nan = np.isnan(x).any(axis=-1)
        biased = np.where(has_nan, 255, biased).astype(np.uint8)
        scale = np.exp2(biased.astype(np.float64) - 127)[..., None]
        q = np.clip(x / scale, -E4M3_MAX, E4M3_MAX)          # NaN stays NaN through clip
        data = q.astype(np.float32).astype(FP8E4M3FN.to_numpy())
    return data.view(np.int8), biased


def tquant_mx_raw(ctx, out, src, max_ws, scaling_ws, dtype=None, group_axis=1, **kwargs):
    x = src.view()
    rows, cols = x.shape
    if group_axis == 1:
        data, exp = mx_quantize_groups(x.reshape(rows, cols // GROUP, GROUP))
        data = data.reshape(rows, cols)
        exp = exp.reshape(1, -1)                              # flat [1, rows·cols/32], row by row
        amax = np.abs(x.reshape(rows, cols // GROUP, GROUP).astype(np.float64)).max(-1).reshape(1, -1)
    else:
        g = x.reshape(rows // GROUP, GROUP, cols).transpose(0, 2, 1)    # groups run down the columns
        data, exp = mx_quantize_groups(g)
        data = data.transpose(0, 2, 1).reshape(rows, cols)
        amax = np.abs(g.astype(np.float64)).max(-1)
    # the workspaces are clobbered as the instruction does: the group maxima and the scaling factors
    write_valid(max_ws, amax.reshape(max_ws.valid))
    write_valid(scaling_ws, np.exp2(exp.astype(np.float64) - 127).reshape(scaling_ws.valid))
    return TileValue(data, data.shape), TileValue(exp, exp.shape)


def tmov_x2zz(ctx, out, src, tmp, group_axis=1, dst_rows=0, dst_cols=0, **kwargs):
    exp = src.view()
    zz = exp.reshape(dst_rows, dst_cols) if group_axis == 1 else exp.T
    return write_valid(out, zz)


def reinterpret_view(ctx, out, x, dtype=None, **kwargs):
    # the same bytes: a width change rescales the last dim; shape= regroups them (the type rule checks both)
    data = np.ascontiguousarray(x.view()).view(out.data.dtype)
    return write_valid(out, data.reshape(out.data.shape) if data.size == out.data.size else data)


def table() -> dict:
    return {"tile.tquant_mx_raw": tquant_mx_raw, "tile.tmov_x2zz": tmov_x2zz, "tile.reinterpret_view": reinterpret_view}
