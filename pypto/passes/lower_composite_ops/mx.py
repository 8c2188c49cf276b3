"""tile.tquant_mx → tile.tquant_mx_raw + tile.tmov_x2zz with explicit workspaces (seed 001,
"Algorithm (tile.tquant_mx rule)").

    axis 1, src [M, K]:  max, scaling = tile.create([1, M·K/32], src dtype, Vec)
                         raw = tile.tquant_mx_raw(src, max, scaling)     # (INT8 [M, K], UINT8 [1, M·K/32])
                         zz  = tile.tmov_x2zz(raw[1], tmp)               # UINT8 [M, K/32]; tmp 64 + ⌈M/16⌉·K/32 B
    axis 0, src [N, K]:  srcT = tile.transpose(src, 0, 1)                # [K, N]
                         raw = tile.tquant_mx_raw(srcT, max, scaling)    # (INT8 [K, N], UINT8 DN [K/32, N])
                         zz  = tile.transpose_view(tile.tmov_x2zz(raw[1], tmp))   # ZZ [N, K/32] → [K/32, N] col/col
    then the FP8E4M3FN data and FP8E8M0 scale aliases via tile.reinterpret_view, returned as a tuple.

The raw op returns values (like gather_compare): the pass folds the projections of the
returned MakeTuple. The workspaces carry target_memory=Vec because this pass runs before
InferTileMemorySpace; they are write effects, so the call survives even when the public results
are unused. a5 (Ascend950) only: other backends get a clear UnsupportedError.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import FP8E4M3FN, FP8E8M0, UINT8
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, MakeTuple, TupleGetItem
from pypto.ir.ops.tile_mx import MX_GROUP, raw_exp_shape, x2zz_tmp_bytes
from pypto.ir.types import static_dims
from pypto.passes.context import PassContext
from pypto.passes.lower_composite_ops.builder import LoweringBuilder


def _vec_tile(b: LoweringBuilder, qualifier: str, shape, dtype) -> Expr:
    return b.bind(qualifier, b.op("tile.create", [list(shape)], {"dtype": dtype, "target_memory": MemorySpace.Vec}))


def lower_tquant_mx_rule(call: Call, args: tuple, b: LoweringBuilder) -> Expr:
    backend = PassContext.current().get_platform().name
    if backend != "a5":
        raise UnsupportedError(f"tile.tquant_mx (MX quantization) exists on a5 (Ascend950) only, not on {backend}",
                               call.span, hint="compile for platform a5 / a5sim")
    axis = call.kwargs["group_axis"]
    src = args[0]
    if axis == 0:
        src = b.bind("src_t", b.op("tile.transpose", [src, 0, 1]))
    rows, cols = static_dims(src.type.shape)
    dtype = src.type.dtype
    aux = raw_exp_shape(rows, cols, axis)
    max_ws = _vec_tile(b, "max_ws", aux, dtype)
    scaling_ws = _vec_tile(b, "scaling_ws", aux, dtype)
    raw = b.bind("raw", b.op("tile.tquant_mx_raw", [src, max_ws, scaling_ws],
                             {"dtype": call.kwargs["dtype"], "group_axis": axis}))
    data_bytes = b.bind("data_i8", TupleGetItem(raw, 0))
    exp = b.bind("exp_u8", TupleGetItem(raw, 1))
    if axis == 1:
        groups = cols // MX_GROUP
        tmp = _vec_tile(b, "x2zz_tmp", (1, x2zz_tmp_bytes(rows, groups)), UINT8)
        scale_bytes = b.bind("scale_zz", b.op("tile.tmov_x2zz", [exp, tmp],
                                              {"group_axis": 1, "dst_rows": rows, "dst_cols": groups}))
    else:
        tmp = _vec_tile(b, "x2zz_tmp", (1, 32), UINT8)     # TMovDnTo2Zz needs a Vec operand, one 32 B block
        zz = b.bind("scale_zz", b.op("tile.tmov_x2zz", [exp, tmp], {"group_axis": 0}))
        scale_bytes = b.bind("scale_dn", b.op("tile.transpose_view", [zz]))
    data = b.bind("data", b.op("tile.reinterpret_view", [data_bytes], {"dtype": FP8E4M3FN}))
    scale = b.bind("scale", b.op("tile.reinterpret_view", [scale_bytes], {"dtype": FP8E8M0}))
    return MakeTuple([data, scale], call.span)
