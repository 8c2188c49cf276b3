"""ConvertTensorToTileOps: the lowerings seed 003 documents one by one (registered into CONVERTERS).

    scatter_update  → i32 flat-index arithmetic (ci / col_expand / muls / row_expand_add [/ cast to i16]),
                      two tile.scatter into zero bases (values, hit mask), cmps != 0, sel with the input
    paged_gather    → tile.create accumulator + a scalar per-row loop of tensor.read and tile.gather_row
    create_l1       → tile.create(target_memory=Mat);  gather_row → tile.gather_row (1:1, DPS)
    aiv_shard / aic_gather → tile.aiv_shard / tile.aic_gather (1:1, split passed through, no load)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX, INT16, INT32
from pypto.ir.enums import CastMode, CmpType, MemorySpace
from pypto.ir.expr import BinaryExpr, ConstInt, IterArg, Var, as_int
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, YieldStmt
from pypto.ir.types import ScalarType, TileType
from pypto.passes.convert_tensor_to_tile_ops.registry import CONVERTERS, converts, tile_op

# tile-level ops that are lowered like their tensor form (not 1:1 hardware instructions)
LOWERED_TILE_OPS = {"tile.scatter_update"}


def _op(ctx, name: str, hint: str, args: list, kwargs: dict | None = None, span=None) -> Var:
    return ctx.bind(hint, create_op_call(name, args, kwargs or {}, span))


@converts("tensor.scatter_update", "tile.scatter_update")
def _scatter_update(call, ctx):
    """input[index.flat[k], :] = src[k, :]; rows no index names keep input (seed: Scatter Update 下沉)."""
    span = call.span
    inp, idx, src = (ctx.tile(call.args[i]) for i in (0, 2, 3))
    if len(inp.type.shape) != 2:
        raise UnsupportedError(f"{call.op.name}: only 2D input/src is currently supported on chip, got rank "
                               f"{len(inp.type.shape)}", span, hint="reshape the cache to [rows, d] first")
    m, d = inp.type.shape
    n = src.type.shape[0]
    dtype = inp.type.dtype
    d_static = as_int(d)
    if d_static is None or as_int(m) is None or as_int(n) is None:
        raise UnsupportedError(f"{call.op.name}: input and src need static shapes", span)
    # i32 throughout: every intermediate is a row-major, 32-byte aligned tile
    col = _op(ctx, "tile.ci", "col", [ConstInt(0, INT32), [1, d]], {"dtype": INT32}, span)
    zeros = _op(ctx, "tile.full", "col_zero", [[n, d]], {"dtype": INT32, "value": 0}, span)
    col_nd = _op(ctx, "tile.col_expand", "col_nd", [zeros, col], {}, span)
    if idx.type.dtype is not INT32:
        idx = _op(ctx, "tile.cast", "index_i32", [idx], {"target_type": INT32}, span)
    idx_col = _op(ctx, "tile.reshape", "index_col", [idx, [n, 1]], {}, span)
    row_base = _op(ctx, "tile.muls", "row_base", [idx_col, ConstInt(d_static, INT32)], {}, span)
    flat = _op(ctx, "tile.row_expand_add", "flat_idx", [col_nd, row_base], {}, span)
    if dtype.get_byte() == 2:
        m_static = as_int(m)
        if m_static * d_static > 32767:
            raise UnsupportedError(f"{call.op.name}: a 2-byte scatter addresses its destination with i16 flat "
                                   f"indices; {m_static} x {d_static} elements exceed the i16 flat-index limit "
                                   "(32767)", span,
                                   hint="split the destination into row blocks of at most 32767 elements")
        flat = _op(ctx, "tile.cast", "flat_idx_i16", [flat], {"target_type": INT16, "mode": CastMode.none}, span)
    base = _op(ctx, "tile.full", "scatter_base", [[m, d]], {"dtype": dtype, "value": 0}, span)
    scattered = _op(ctx, "tile.scatter", "scattered", [base, src, flat], {}, span)
    mask_base = _op(ctx, "tile.full", "mask_base", [[m, d]], {"dtype": dtype, "value": 0}, span)
    ones = _op(ctx, "tile.full", "ones", [[n, d]], {"dtype": dtype, "value": 1}, span)
    hit = _op(ctx, "tile.scatter", "hit", [mask_base, ones, flat], {}, span)
    pred = _op(ctx, "tile.cmps", "pred", [hit, ConstInt(0)], {"cmp_type": CmpType.NE}, span)
    tmp = _op(ctx, "tile.create", "sel_tmp", [[m, d]], {"dtype": dtype, "target_memory": MemorySpace.Vec}, span)
    # sel, not input * mask: no tmul, which a2a3 refuses for bf16 / i8
    return create_op_call("tile.sel", [pred, scattered, inp, tmp], {}, span)


@converts("tensor.paged_gather")
def _paged_gather(call, ctx):
    """A scalar per-row loop: phys = block_table[idx // bs] * bs + idx % bs; gather_row(acc, src, ...)."""
    span = call.span
    src, indices, table = (ctx.plain(a) for a in call.args)
    kw = call.kwargs
    bs, size, max_rows, trans = kw["block_size"], kw["size"], kw["max_indices"], kw["is_trans"]
    shape = [size, max_rows] if trans else [max_rows, size]
    acc0 = _op(ctx, "tile.create", "gather_acc", [shape],
               {"dtype": src.type.dtype, "target_memory": kw["space"]}, span)
    rows = indices.type.shape[-1]
    i = Var("i", ScalarType(INDEX), span)
    acc = IterArg("acc", acc0.type, acc0, span)

    def at(t, k):
        return [ConstInt(0), k] if t.type.rank == 2 else [k]

    idx = Var("idx", ScalarType(INT32), span)
    page = Var("page", ScalarType(INT32), span)
    phys = Var("phys", ScalarType(INT32), span)
    row = Var("acc_row", acc0.type, span)
    body = [AssignStmt(idx, create_op_call("tensor.read", [indices, at(indices, i)], {}, span), span),
            AssignStmt(page, create_op_call("tensor.read", [table, at(table, BinaryExpr("floordiv", idx, ConstInt(bs)))],
                                            {}, span), span),
            AssignStmt(phys, BinaryExpr("add", BinaryExpr("mul", page, ConstInt(bs)),
                                        BinaryExpr("floormod", idx, ConstInt(bs))), span),
            AssignStmt(row, create_op_call("tile.gather_row",
                                           [acc, src, [ConstInt(0), i] if trans else [i, ConstInt(0)],
                                            [phys, ConstInt(kw["col_off"])], [1, size]],
                                           {"transpose": trans}, span), span),
            YieldStmt([row], span)]
    result = Var("gathered", acc0.type, span)
    ctx.emit(ForStmt(i, ConstInt(0), rows, ConstInt(1), [acc], SeqStmts(body, span), [result], span=span))
    return result


@converts("tensor.create_l1")
def _create_l1(call, ctx):
    # transpose=True asks for the ZN fractal (blayout row_major, slayout col_major); tile.create's
    # type rule puts it on the Mat tile's view. The simulator keeps tiles logically row-major.
    kwargs = {"dtype": call.kwargs["dtype"], "target_memory": MemorySpace.Mat}
    if call.kwargs.get("transpose"):
        kwargs["transpose"] = True
    return create_op_call("tile.create", [ctx.plain(call.args[0])], kwargs, call.span)


@converts("tensor.gather_row")
def _gather_row(call, ctx):
    acc = ctx.tile(call.args[0])
    rest = [ctx.plain(a) for a in call.args[1:]]
    return tile_op(ctx, "tile.gather_row", [acc] + rest, call)


@converts("tensor.aiv_shard", "tensor.aic_gather")
def _split_boundary(call, ctx):
    """1:1; the operand is already on chip (a cube result / a vector value), so no load is added."""
    x = ctx.plain(call.args[0])
    x = ctx.k.param_tiles.get(x, x)
    if not isinstance(x.type, TileType):
        raise UnsupportedError(f"ConvertTensorToTileOps: {call.op.name} needs an on-chip operand (a matmul result "
                               "or a vector value), got a GM tensor", call.span,
                               hint="compute the operand inside the kernel")
    return tile_op(ctx, "tile." + call.op.short_name, [x], call)


assert all(n in CONVERTERS for n in LOWERED_TILE_OPS)
