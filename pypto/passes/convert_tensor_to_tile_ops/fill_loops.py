"""ConvertTensorToTileOps: a loop that writes one constant over a contiguous run of a GM tensor is one
bulk store.

    for i in pl.range(16):                                 dst_fill_row = pl.tensor.full([1, 16], value=0.0)
        pl.tensor.write(dst, [i, 0], 0.0)          →       dst_fill = pl.tensor.reshape(dst_fill_row, [16, 1])
                                                           pl.tensor.assemble(dst, dst_fill, [0, 0])

Element by element the writes go through the scalar unit's D-cache; as a tensor.full and an assemble
they become tile.full + tile.store (MTE3): faster, and the tensor then has one store path, so a kernel
that stores it by DMA on another branch is no longer rejected for mixing the two (store_paths.py).

Rewritten only when the result is the same: a loop `for i in range(0, N, 1)` with no carries, whose body
is nothing but `tensor.write(t, idx, constant)` statements, all with the same index tuple and the same
target type (so hoisting each statement over the whole loop keeps every element's last write); the
index varies in one axis by exactly i (i, i + c or c + i) and every axis after it has extent 1 at
offset 0 (the run is contiguous); and the run is a whole number of 32-byte blocks (a shorter or ragged
run stays on the scalar path: MTE3 moves 32-byte blocks).
"""

from __future__ import annotations

from pypto.ir.expr import BinaryExpr, Call, ConstFloat, ConstInt, MakeTuple, Var
from pypto.ir.enums import ForKind
from pypto.ir.equality import structural_equal
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt
from pypto.ir.types import TensorType
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import body_list, used_vars

_MTE3_BLOCK_BITS = 256


def _offset_of(index, loop_var):
    """The run's start when `index` steps with the loop var by 1 (i, i + c, c + i), else None."""
    if index is loop_var:
        return ConstInt(0)
    if isinstance(index, BinaryExpr) and index.op == "add":
        if index.lhs is loop_var and loop_var not in used_vars(index.rhs):
            return index.rhs
        if index.rhs is loop_var and loop_var not in used_vars(index.lhs):
            return index.lhs
    return None


def _constant_write(s):
    """The tensor.write call of `s` when it writes a constant, else None."""
    c = s.expr if isinstance(s, EvalStmt) else None
    if not (isinstance(c, Call) and getattr(c.op, "name", None) == "tensor.write" and len(c.args) == 3):
        return None
    target, indices, value = c.args
    if not (isinstance(value, (ConstInt, ConstFloat)) and isinstance(target.type, TensorType)
            and isinstance(indices, MakeTuple) and len(indices.elements) == len(target.type.shape)):
        return None
    return c


def _bulk(loop):
    """The statements replacing `loop`, or None when it is not a constant contiguous fill."""
    start, stop, step = (x.value if isinstance(x, ConstInt) else None for x in (loop.start, loop.stop, loop.step))
    if start != 0 or step != 1 or stop is None or stop <= 0 or loop.kind is not ForKind.Sequential \
            or loop.iter_args or loop.return_vars or loop.attrs:
        return None
    writes = [_constant_write(s) for s in body_list(loop.body)]
    if not writes or None in writes:
        return None
    first = writes[0]
    if any(not structural_equal(w.args[0].type, first.args[0].type) or not structural_equal(w.args[1], first.args[1])
           for w in writes[1:]) or first.args[0].type.tensor_view is not None:
        return None
    out = []
    for w in writes:
        target, indices, value = w.args
        t = target.type
        varying, offsets = None, []
        for axis, index in enumerate(indices.elements):
            if loop.loop_var not in used_vars(index):
                offsets.append(index)
                continue
            base = _offset_of(index, loop.loop_var)
            if varying is not None or base is None:
                return None
            varying = axis
            offsets.append(base)
        if varying is None or (stop * t.dtype.get_bit()) % _MTE3_BLOCK_BITS:
            return None
        for axis in range(varying + 1, len(t.shape)):
            extent, offset = t.shape[axis], offsets[axis]
            if not (isinstance(extent, ConstInt) and extent.value == 1 and isinstance(offset, ConstInt)
                    and offset.value == 0):
                return None
        base = getattr(target, "name_hint", "t")
        row = create_op_call("tensor.full", [[1, stop]], {"dtype": t.dtype, "value": value.value}, w.span)
        row_var = Var(f"{base}_fill_row", row.type, w.span)
        shape = [stop if axis == varying else 1 for axis in range(len(t.shape))]
        fill = create_op_call("tensor.reshape", [row_var, shape], {}, w.span)
        fill_var = Var(f"{base}_fill", fill.type, w.span)
        out += [AssignStmt(row_var, row, w.span), AssignStmt(fill_var, fill, w.span),
                EvalStmt(create_op_call("tensor.assemble", [target, fill_var, offsets], {}, w.span), w.span)]
    return out


class _FillLoops(IRMutator):
    def mutate_seq_stmts(self, seq):
        seq = self.mutate_children(seq)
        out, changed = [], False
        for s in seq.stmts:
            bulk = _bulk(s) if isinstance(s, ForStmt) else None
            changed |= bulk is not None
            out += bulk if bulk is not None else [s]
        return seq.replace(stmts=tuple(out)) if changed else seq


def bulk_fill_loops(func):
    """`func` with each constant contiguous scalar-fill loop written as tensor.full + assemble (see above)."""
    body = _FillLoops().mutate(func.body)
    return func if body is func.body else func.replace(body=body)
