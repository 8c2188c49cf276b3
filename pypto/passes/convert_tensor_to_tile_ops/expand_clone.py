"""tensor.expand_clone(src, target) → src broadcast over target's shape, written into target.

The broadcast writes target itself (so its parameter becomes Out / InOut), one axis at a time, choosing
the cheapest tile form for the axis that has extent 1 in src (3-D operands, one broadcast axis):

    axis 0  src [1, A, B]:  load src once; for i < T: store it at [i, 0, 0]          (a loop carrying target)
    axis 1  src [T, 1, B]:  for i < T: load src[i] ([1, 1, B]), col_expand over [1, A, B], store at [i, 0, 0]
    axis 2  src [T, A, 1]:  load src, row_expand over [T, A, B], store at [0, 0, 0]

Other ranks and several broadcast axes are a clear error.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt, IterArg, Var, as_int
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, YieldStmt
from pypto.ir.types import ScalarType, TensorType
from pypto.passes.convert_tensor_to_tile_ops.registry import converts

_VEC = {"target_memory": MemorySpace.Vec}


def _loop_into(ctx, target, trips: int, build_body, span):
    """for i < trips, carrying `target`: build_body(i, acc, let) returns the updated tensor to yield."""
    i = Var("i", ScalarType(INDEX), span)
    acc = IterArg("expand_clone_acc", target.type, target, span)
    body: list = []

    def let(hint, name, args, kwargs=None):
        value = create_op_call(name, args, kwargs or {}, span)
        v = Var(hint, value.type, span)
        body.append(AssignStmt(v, value, span))
        return v

    updated = build_body(i, acc, let)
    body.append(YieldStmt([updated], span))
    result = Var("expand_clone_result", target.type, span)
    ctx.emit(ForStmt(i, ConstInt(0), ConstInt(trips), ConstInt(1), [acc], SeqStmts(body, span), [result], span=span))
    return result


@converts("tensor.expand_clone")
def _expand_clone(call, ctx):
    span = call.span
    src, target = ctx.plain(call.args[0]), ctx.plain(call.args[1])
    if not isinstance(src.type, TensorType) or not isinstance(target.type, TensorType):
        raise UnsupportedError("ConvertTensorToTileOps: tensor.expand_clone on chip reads and writes GM tensors",
                               span, hint="expand_clone a kernel parameter into another")
    s = [as_int(d) for d in src.type.shape]
    t = [as_int(d) for d in target.type.shape]
    axes = [d for d, (a, b) in enumerate(zip(s, t)) if a != b]
    if len(s) != 3 or None in s or None in t or len(axes) != 1:
        raise UnsupportedError(f"ConvertTensorToTileOps: tensor.expand_clone on chip is built for static 3-D "
                               f"operands broadcasting one axis; got src {s}, target {t}", span,
                               hint="broadcast with pl.row_expand / pl.col_expand on tiles")
    ctx.note_written(target)
    dtype, zero = src.type.dtype, ConstInt(0)
    axis = axes[0]
    if axis == 0:
        whole = ctx.bind("expand_clone_input", create_op_call("tile.load", [src, [zero, zero, zero], s, s], _VEC, span))
        return _loop_into(ctx, target, t[0], lambda i, acc, let: let(
            "expand_clone_d0_store", "tile.store", [whole, [i, zero, zero], acc]), span)
    if axis == 1:
        def per_slab(i, acc, let):
            row = let("expand_clone_d1_input", "tile.load", [src, [i, zero, zero], [1, 1, t[2]], [1, 1, t[2]]], _VEC)
            slab = let("expand_clone_d1_target", "tile.create", [[1, t[1], t[2]]], {"dtype": dtype})
            spread = let("expand_clone_d1_col", "tile.col_expand", [slab, row])
            return let("expand_clone_d1_store", "tile.store", [spread, [i, zero, zero], acc])
        return _loop_into(ctx, target, t[0], per_slab, span)
    whole = ctx.bind("expand_clone_input", create_op_call("tile.load", [src, [zero, zero, zero], s, s], _VEC, span))
    base = ctx.bind("expand_clone_d2_target", create_op_call("tile.create", [t], {"dtype": dtype}, span))
    spread = ctx.bind("expand_clone_d2_row", create_op_call("tile.row_expand", [base, whole], {}, span))
    return create_op_call("tile.store", [spread, [zero, zero, zero], target], {}, span)
