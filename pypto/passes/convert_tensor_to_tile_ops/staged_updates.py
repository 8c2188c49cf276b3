"""ConvertTensorToTileOps: a GM tensor initialised in full and then patched by scalar writes is staged in UB.

    fill = pl.full([1, 32], dtype=pl.INT32, value=0)      fill = pl.full([1, 32], dtype=pl.INT32, value=0)
    dst2 = pl.assemble(dst, fill, [0, 0])          →      ... pl.tensor.write(fill, [0, i], v) ...
    ... pl.tensor.write(dst2, [0, i], v) ...              dst2 = pl.assemble(dst, fill, [0, 0])   (moved last)
    return ...                                            return ...

Written as is, the kernel stores the tensor once by DMA (the assemble, MTE3) and then element by element
through the scalar unit, two store paths that are not ordered against each other (store_paths.py
rejects that). Writing the updates into the fill instead — a local tensor, so they become tile.write on
its UB tile — and storing it once, after them, keeps every GM write on MTE3 and computes the same
tensor. Done only when nothing else can observe the difference: the fill is a tensor.full of the whole
parameter, assembled at offset 0 by the statement right after it, at the top level of the body; neither
the fill nor the assembled tensor is used anywhere else, except the assembled tensor as the target of
tensor.write or as a returned value.
"""

from __future__ import annotations

from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, ConstInt, MakeTuple, Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ReturnStmt
from pypto.ir.types import TensorType
from pypto.ir.visitor import IRMutator, IRVisitor
from pypto.passes.analysis import as_seq_like, body_list


def _op(value, name: str) -> bool:
    return isinstance(value, Call) and getattr(value.op, "name", None) == name


def _zero_offsets(e, rank: int) -> bool:
    return isinstance(e, MakeTuple) and len(e.elements) == rank and all(
        isinstance(x, ConstInt) and x.value == 0 for x in e.elements)


def _plain_tensor(t) -> bool:
    return isinstance(t, TensorType) and getattr(t, "tensor_view", None) is None


def _candidate(fill: AssignStmt, assemble: AssignStmt, params: set):
    """(target, fill var) when `fill; assemble` is a whole-tensor initialisation of a parameter."""
    if not (isinstance(fill, AssignStmt) and isinstance(assemble, AssignStmt) and _op(fill.value, "tensor.full")
            and _op(assemble.value, "tensor.assemble") and len(assemble.value.args) == 3):
        return None
    dest, source, offsets = assemble.value.args
    target = assemble.var
    if dest not in params or source is not fill.var or target is fill.var:
        return None
    types = (target.type, dest.type, source.type)
    if not all(_plain_tensor(t) for t in types) or len({t.dtype for t in types}) != 1:
        return None
    if not (structural_equal(target.type.shape, dest.type.shape) and structural_equal(target.type.shape,
                                                                                        source.type.shape)):
        return None
    return (target, fill.var) if _zero_offsets(offsets, len(target.type.shape)) else None


class _Uses(IRVisitor):
    """Which candidates are used other than as allowed, and how many scalar writes each target gets."""

    def __init__(self, targets: dict, fills: dict, definitions: set):
        self.targets, self.fills, self.definitions = targets, fills, definitions
        self.unsafe: set = set()
        self.writes: dict = {}

    def visit_var(self, v):
        for table in (self.targets, self.fills):
            if v in table:
                self.unsafe.add(table[v])

    def visit_assign_stmt(self, s):
        if id(s) not in self.definitions:
            self.visit_children(s)

    def visit_call(self, c):
        if _op(c, "tensor.write") and len(c.args) == 3 and c.args[0] in self.targets:
            key = self.targets[c.args[0]]
            self.writes[key] = self.writes.get(key, 0) + 1
            self.visit(c.args[1])
            self.visit(c.args[2])
            return
        self.visit_children(c)

    def visit_return_stmt(self, s):
        for v in s.values:
            if v not in self.targets:
                self.visit(v)


class _RedirectWrites(IRMutator):
    def __init__(self, fill_of: dict):
        self.fill_of = fill_of

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if _op(c, "tensor.write") and c.args and c.args[0] in self.fill_of:
            return c.replace(args=(self.fill_of[c.args[0]],) + tuple(c.args[1:]))
        return c


def stage_scalar_updates(func: Function) -> Function:
    """`func` with each safe full-init-then-scalar-writes pattern staged in the fill (see above)."""
    stmts = body_list(func.body)
    if len(stmts) < 3 or not isinstance(stmts[-1], ReturnStmt):
        return func
    params = set(func.params)
    found: dict = {}          # index of the assemble statement → (target, fill)
    for i in range(1, len(stmts) - 1):
        got = _candidate(stmts[i - 1], stmts[i], params)
        if got is not None and all(got[0] is not t and got[1] is not f for t, f in found.values()):
            found[i] = got
    if not found:
        return func
    targets = {t: i for i, (t, _) in found.items()}
    fills = {f: i for i, (_, f) in found.items()}
    definitions = {id(stmts[i]) for i in found} | {id(stmts[i - 1]) for i in found}
    uses = _Uses(targets, fills, definitions)
    uses.visit(func.body)
    accepted = [i for i in found if i not in uses.unsafe and uses.writes.get(i, 0) > 0]
    if not accepted:
        return func
    redirect = _RedirectWrites({found[i][0]: found[i][1] for i in accepted})
    out = [redirect.mutate(s) for k, s in enumerate(stmts[:-1]) if k not in accepted]
    out += [stmts[i] for i in accepted]
    out.append(redirect.mutate(stmts[-1]))
    return func.replace(body=as_seq_like(out, func.body))
