"""tensor.scatter along the last axis → two tile.scatter into zeroed bases and a select with the input.

pto.tscatter writes `dst.flat[k]` and leaves nothing it does not write defined, so keeping the input's
other elements takes a blend: the values scattered into a zero base, a ones tile scattered into a second
zero base marks the written positions, and `sel(hit != 0, values, input)` picks per element (a select,
not input * mask: the vector multiply refuses bf16 / int8). Row-relative indices become flat ones as for
gather (gather_lowering.flat_row_index, per-row base); 2-byte data addresses its destination with i16
flat indices, so its element count must fit that range.

    out = tensor.scatter(x [M, N], -1, index [R, K], src [R, K])      # out[i, index[i, j]] = src[i, j]

tensor.scatter_mask(input, dst, mask_pattern=p) keeps dst the same way: tile.scatter_mask zero-fills its
destination, so the input scattered into a zero base and a ones tile scattered into another mark the
pattern's columns, and the select takes dst everywhere else.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INT16, INT32
from pypto.ir.enums import CastMode, CmpType, MemorySpace
from pypto.ir.expr import ConstInt, as_int
from pypto.passes.convert_tensor_to_tile_ops.gather_lowering import _bind, flat_row_index
from pypto.passes.convert_tensor_to_tile_ops.registry import converts

_I16_LIMIT = 32767


@converts("tensor.scatter")
def _scatter(call, ctx):
    span = call.span
    inp, index, src = ctx.tile(call.args[0]), ctx.tile(call.args[2]), ctx.tile(call.args[3])
    rank = len(inp.type.shape)
    dim = as_int(call.args[1])
    if dim is not None and dim < 0:
        dim += rank
    if rank != 2 or dim != 1:
        raise UnsupportedError(f"ConvertTensorToTileOps: tensor.scatter on chip is built for 2-D tensors along the "
                               f"last axis (dim=-1); got rank {rank}, dim {as_int(call.args[1])}", span,
                               hint="scatter along the last axis, or transpose the operand first")
    m, n = (as_int(d) for d in inp.type.shape)
    r, k = (as_int(d) for d in index.type.shape)
    if None in (m, n, r, k):
        raise UnsupportedError("ConvertTensorToTileOps: tensor.scatter needs static shapes", span)
    dtype = inp.type.dtype
    if index.type.dtype is not INT32:
        index = _bind(ctx, "scatter_idx_i32", "tile.cast", [index], {"target_type": INT32, "mode": CastMode.none},
                      span)
    flat = flat_row_index(ctx, index, n, span, per_row=True)
    if dtype.get_byte() == 2:
        if m * n > _I16_LIMIT:
            raise UnsupportedError(f"ConvertTensorToTileOps: tensor.scatter of 2-byte data addresses its destination "
                                   f"with i16 flat indices; {m} x {n} elements exceed the i16 flat-index limit "
                                   f"({_I16_LIMIT})", span, hint="scatter into row blocks of at most 32767 elements")
        flat = _bind(ctx, "scatter_flat_i16", "tile.cast", [flat], {"target_type": INT16, "mode": CastMode.none},
                     span)
    base = _bind(ctx, "scatter_base", "tile.full", [[m, n]], {"dtype": dtype, "value": 0}, span)
    values = _bind(ctx, "scatter_values", "tile.scatter", [base, src, flat], {}, span)
    mask_base = _bind(ctx, "scatter_mask_base", "tile.full", [[m, n]], {"dtype": dtype, "value": 0}, span)
    ones = _bind(ctx, "scatter_ones", "tile.full", [[r, k]], {"dtype": dtype, "value": 1}, span)
    hit = _bind(ctx, "scatter_hit", "tile.scatter", [mask_base, ones, flat], {}, span)
    pred = _bind(ctx, "scatter_pred", "tile.cmps", [hit, ConstInt(0)], {"cmp_type": CmpType.NE}, span)
    tmp = _bind(ctx, "scatter_sel_tmp", "tile.create", [[m, n]], {"dtype": dtype, "target_memory": MemorySpace.Vec},
                span)
    return _bind(ctx, "scatter", "tile.sel", [pred, values, inp, tmp], {}, span)


@converts("tensor.scatter_mask")
def _scatter_mask(call, ctx):
    span = call.span
    inp, dst = ctx.tile(call.args[0]), ctx.tile(call.args[1])
    shape = [as_int(d) for d in dst.type.shape]
    rows, cols = (as_int(d) for d in inp.type.shape)
    if None in (*shape, rows, cols):
        raise UnsupportedError("ConvertTensorToTileOps: tensor.scatter_mask needs static shapes", span)
    dtype, pattern = dst.type.dtype, {"mask_pattern": call.kwargs["mask_pattern"]}
    base = _bind(ctx, "scatter_mask_base", "tile.full", [shape], {"dtype": dtype, "value": 0}, span)
    values = _bind(ctx, "scatter_mask_values", "tile.scatter_mask", [base, inp], pattern, span)
    mark_base = _bind(ctx, "scatter_mask_mark_base", "tile.full", [shape], {"dtype": dtype, "value": 0}, span)
    ones = _bind(ctx, "scatter_mask_ones", "tile.full", [[rows, cols]], {"dtype": dtype, "value": 1}, span)
    hit = _bind(ctx, "scatter_mask_hit", "tile.scatter_mask", [mark_base, ones], pattern, span)
    pred = _bind(ctx, "scatter_mask_pred", "tile.cmps", [hit, ConstInt(0)], {"cmp_type": CmpType.NE}, span)
    tmp = _bind(ctx, "scatter_mask_sel_tmp", "tile.create", [shape], {"dtype": dtype, "target_memory": MemorySpace.Vec},
                span)
    return _bind(ctx, "scatter_mask", "tile.sel", [pred, values, dst, tmp], {}, span)
