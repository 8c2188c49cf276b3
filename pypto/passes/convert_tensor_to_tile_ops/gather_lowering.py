"""tensor.gather along the last axis → one whole-tile tile.gather over flat indices.

pto.tgather reads `src.flat[k]`, so a row-relative index `index[i, j]` (torch.gather, dim=-1) is made
absolute first: `flat[i, j] = index[i, j] + i * src_cols`. The row base `i * src_cols` is built on
the vector unit in int32: when an index row fills whole 32-byte blocks (cols % 8 == 0) a linear
sequence over the whole tile divided by the row length gives each element its row; otherwise one
sequence over the rows, reshaped to a column and row-broadcast onto the index. An INT16 index is
widened for the arithmetic and narrowed back (int → int casts, no rounding: mode none).

    src [R, S], index [R, K] →  base = ci(0, [1, R]) → reshape [R, 1] → muls(S)
                                flat = row_expand_add(index, base);  out = tile.gather(src, flat, tmp)

A source already on chip is first copied into a packed tile (it may be a strided window of a wider
one, and pto.tgather indexes physical rows). On a2a3 a GM-to-GM gather instead walks the rows (as the
reference does there): each iteration loads one source row and one index row, gathers within the row
(its indices are already row-relative) and assembles the row into an accumulator tile. Other axes stay
unconverted (a clear error names them).
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INT32
from pypto.ir.enums import CastMode, MemorySpace
from pypto.ir.dtypes import INDEX
from pypto.ir.expr import ConstInt, IterArg, Var, as_int
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, YieldStmt
from pypto.ir.types import ScalarType, TensorType
from pypto.passes.context import PassContext
from pypto.passes.convert_tensor_to_tile_ops.registry import converts

_INDEX_BLOCK_ELEMS = 8      # int32 elements in one 32-byte vector block


def _bind(ctx, hint, name, args, kwargs, span):
    return ctx.bind(hint, create_op_call(name, args, kwargs, span))


def flat_row_index(ctx, index, src_cols: int, span, per_row: bool = False):
    """index + row * src_cols over an int32 [R, K] index tile (see the module docstring); per_row forces
    the per-row base."""
    rows, cols = (as_int(d) for d in index.type.shape)
    if cols % _INDEX_BLOCK_ELEMS == 0 and not per_row:
        lin = _bind(ctx, "gather_lin", "tile.ci", [ConstInt(0, INT32), [1, rows * cols]], {"dtype": INT32}, span)
        lin2d = _bind(ctx, "gather_lin2d", "tile.reshape", [lin, [rows, cols]], {}, span)
        row_ids = _bind(ctx, "gather_row_ids", "tile.divs", [lin2d, ConstInt(cols, INT32)], {}, span)
        base = _bind(ctx, "gather_row_base", "tile.muls", [row_ids, ConstInt(src_cols, INT32)], {}, span)
        return _bind(ctx, "gather_flat_idx", "tile.add", [index, base], {}, span)
    seq = _bind(ctx, "gather_ci_rows", "tile.ci", [ConstInt(0, INT32), [1, rows]], {"dtype": INT32}, span)
    col = _bind(ctx, "gather_row_arange", "tile.reshape", [seq, [rows, 1]], {}, span)
    base = _bind(ctx, "gather_row_base", "tile.muls", [col, ConstInt(src_cols, INT32)], {}, span)
    return _bind(ctx, "gather_flat_idx", "tile.row_expand_add", [index, base], {}, span)


def _per_row_gather(ctx, src, index, span):
    """for r: acc[r, :] = gather(src[r, :], index[r, :]) with both rows loaded from GM."""
    rows, src_cols = (as_int(d) for d in src.type.shape)
    k = as_int(index.type.shape[1])
    acc0 = _bind(ctx, "gather_acc_init", "tile.create", [[rows, k]],
                 {"dtype": src.type.dtype, "target_memory": MemorySpace.Vec}, span)
    r = Var("gather_lv", ScalarType(INDEX), span)
    acc = IterArg("gather_ia", acc0.type, acc0, span)

    def let(hint, name, args, kwargs):
        value = create_op_call(name, args, kwargs, span)
        v = Var(hint, value.type, span)
        body.append(AssignStmt(v, value, span))
        return v

    body: list = []
    vec = {"target_memory": MemorySpace.Vec}
    src_row = let("gather_inp_row", "tile.load", [src, [r, ConstInt(0)], [1, src_cols], [1, src_cols]], vec)
    idx_row = let("gather_idx_row", "tile.load", [index, [r, ConstInt(0)], [1, k], [1, k]], vec)
    tmp = let("gather_row_tmp", "tile.create", [[1, k]], {"dtype": index.type.dtype, **vec})
    row = let("gather_row", "tile.gather", [src_row, idx_row, tmp], {})
    merged = let("gather_asmbl", "tile.assemble", [acc, row, [r, ConstInt(0)]], {})
    body.append(YieldStmt([merged], span))
    result = Var("gather_rv", acc0.type, span)
    ctx.emit(ForStmt(r, ConstInt(0), ConstInt(rows), ConstInt(1), [acc], SeqStmts(body, span), [result], span=span))
    return result


def _operand(ctx, arg, hint, span):
    """A GM operand is loaded where the gather reads it (a natural Vec load); a tile is used as it is."""
    plain = ctx.plain(arg)
    if isinstance(plain.type, TensorType) and plain not in ctx.k.gm_views and plain.type.rank == 2 \
            and None not in [as_int(d) for d in plain.type.shape]:
        shape = list(plain.type.shape)
        return _bind(ctx, hint, "tile.load", [plain, [ConstInt(0)] * len(shape), shape, shape],
                     {"target_memory": MemorySpace.Vec}, span)
    return ctx.tile(arg)


def _materialized(ctx, src, span):
    """pto.tgather indexes its source's physical rows: a tile computed earlier may be a strided window of a
    wider tile (a slice), so its valid region is copied into a packed tile of its own first."""
    shape = list(src.type.shape)
    window = _bind(ctx, "gather_inp", "tile.slice", [src, shape, [ConstInt(0)] * len(shape), shape], {}, span)
    packed = _bind(ctx, "gather_src_alloc", "tile.create", [shape],
                   {"dtype": src.type.dtype, "target_memory": MemorySpace.Vec}, span)
    return _bind(ctx, "gather_src_copy", "tile.assemble", [packed, window, [ConstInt(0)] * len(shape)], {}, span)


@converts("tensor.gather")
def _gather(call, ctx):
    span = call.span
    gm_src, gm_index = ctx.plain(call.args[0]), ctx.plain(call.args[2])
    if PassContext.current().platform == "a2a3" and isinstance(gm_src.type, TensorType) \
            and isinstance(gm_index.type, TensorType) and gm_src not in ctx.k.gm_views \
            and gm_index not in ctx.k.gm_views and len(gm_src.type.shape) == 2 \
            and as_int(call.args[1]) in (-1, 1) and None not in [as_int(d) for d in (*gm_src.type.shape,
                                                                                     *gm_index.type.shape)]:
        return _per_row_gather(ctx, gm_src, gm_index, span)
    src = _operand(ctx, call.args[0], "gather_inp", span)
    if not isinstance(gm_src.type, TensorType) and len(src.type.shape) == 2:
        src = _materialized(ctx, src, span)
    index = _operand(ctx, call.args[2], "gather_idx", span)
    rank = len(src.type.shape)
    dim = as_int(call.args[1])
    if dim is not None and dim < 0:
        dim += rank
    if rank != 2 or dim != 1:
        raise UnsupportedError(f"ConvertTensorToTileOps: tensor.gather on chip is built for 2-D tensors along the "
                               f"last axis (dim=-1); got rank {rank}, dim {as_int(call.args[1])}", span,
                               hint="gather along the last axis, or transpose the operand first")
    dims = [as_int(d) for d in (*src.type.shape, *index.type.shape)]
    if None in dims:
        raise UnsupportedError("ConvertTensorToTileOps: tensor.gather needs static shapes", span)
    narrow = index.type.dtype
    if narrow is not INT32:
        index = _bind(ctx, "gather_idx_i32", "tile.cast", [index], {"target_type": INT32, "mode": CastMode.none},
                      span)
    flat = flat_row_index(ctx, index, dims[1], span)
    if narrow is not INT32:
        flat = _bind(ctx, "gather_flat_idx_narrow", "tile.cast", [flat], {"target_type": narrow,
                                                                          "mode": CastMode.none}, span)
    tmp = _bind(ctx, "gather_tmp", "tile.create", [list(index.type.shape)],
                {"dtype": flat.type.dtype, "target_memory": MemorySpace.Vec}, span)
    # bound to its own Var, as the reference spells a multi-statement lowering (out = gather)
    return _bind(ctx, "gather", "tile.gather", [src, flat, tmp], {}, span)
