"""Backward memory demand for InferTileMemorySpace: a tile.load / tile.create that leaves its landing
space open lands where its readers need it.

A `target_memory` the program states is kept: the DSL and the IR builders always state one (Vec
when the user wrote none), so a user's `pl.load(x, ...)` feeding `pl.move(..., target_memory=Left)`
stays a Vec load and the move stays (a vector → cube hand-over for ExpandMixedKernel). A converter
that wants the readers to decide marks its producer with the `MEMORY_BY_DEMAND` attr (see
`leave_memory_to_demand`); only those are retargeted, and the mark is dropped once decided.
Each reader states a demand — the spaces its op accepts for that operand (OpDef.input_memory), or
the target of a `tile.move` — and when every reader's demand agrees on one space the producer is
retargeted there instead of being followed by moves: a load only the cube reads (moves to Left /
Right / Bias, extracts, matmul operands) lands in Mat, because GM → Mat → Left is the cube's data
path and Vec → Left is none; a Mat load only vector ops read lands in Vec. A `tile.move` into
the space the producer now lands in is redundant and is removed (its readers read the producer).
A reader with no demand (store, call, yield, loop carry, return, an op without input_memory)
pins the producer where it is; a zero-copy view (transpose_view, ...) passes its own readers'
demands through. GM loads land only in Vec or Mat, so a demand for Left / Right /
Bias counts as Mat for them (operand_moves then adds the Mat → Left / Right moves the readers need).

    before:  ta = tile.load(a, ..., target_memory=Vec);  ta_mat = tile.move(ta, target_memory=Mat)
             ta_left = tile.move(ta_mat, target_memory=Left)
    after:   ta = tile.load(a, ..., target_memory=Mat);  ta_left = tile.move(ta, target_memory=Left)
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts
from pypto.ir.visitor import IRVisitor, SplicingMutator, VarSubstituter, collect_statements

# Call attr: "this producer's target_memory is a placeholder; let the readers decide".
MEMORY_BY_DEMAND = "target_memory_by_demand"
_CUBE_OPERANDS = {MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias}
# Producers whose landing space is a kwarg: retargeted in place instead of followed by a tile.move.
_RETARGETABLE = ("tile.load", "tile.create")
_KEEP = "keep"          # a reader that needs the tile where it is (store, loop carry, call, ...)
# Zero-copy views: their result lives where their operand does.
_VIEWS = ("tile.transpose_view", "tile.reinterpret_view", "tile.set_validshape")


def _landing(space: MemorySpace, producer: str) -> Optional[MemorySpace]:
    """Where a producer lands to serve a reader that wants `space` (None: nowhere better than
    where it is): a cube operand buffer is filled from Mat; GM loads reach only Vec / Mat."""
    if space in _CUBE_OPERANDS:
        return MemorySpace.Mat
    if producer == "tile.load" and space not in (MemorySpace.Vec, MemorySpace.Mat):
        return None
    return space


def _is_plain_move(call: Call) -> bool:
    return call.op.name == "tile.move" and call.kwargs.get("blayout") is None and call.kwargs.get("slayout") is None


def _demand(call: Call, i: int):
    """The spaces reader `call` accepts for argument i, most preferred first, or _KEEP."""
    if call.op.name == "tile.move":
        return (call.kwargs.get("target_memory"),)
    spaces = call.op.input_memory.get(i)
    return tuple(spaces) if spaces else _KEEP


class _Substitute(VarSubstituter):
    """VarSubstituter that also reaches iter-arg initial values (an IterArg is a binding site)."""

    def __init__(self, mapping: dict):
        super().__init__(mapping)
        self.iter_args: dict = {}

    def mutate_iter_arg(self, v):
        if v not in self.iter_args:
            init = self.mutate(v.init_value)
            self.iter_args[v] = v if init is v.init_value else IterArg(v.name_hint, v.type, init, v.span)
        return self.iter_args[v]


class _Readers(IRVisitor):
    """Collects each producer's reader demands; a zero-copy view of a producer (transpose_view, ...)
    lands where the producer does, so its readers' demands count as the producer's."""

    def __init__(self, producers: set):
        self.root: dict = {v: v for v in producers}          # producer or view of one → the producer
        self.demands: dict = {v: [] for v in producers}
        self.moves: dict = {v: [] for v in producers}        # producer → [(move var, target)]
        self._binding: Optional[Var] = None

    def visit_call(self, c):
        for i, a in enumerate(c.args):
            if a not in self.root:
                self.visit(a)
                continue
            root = self.root[a]
            if isinstance(c.op, GlobalVar):
                self.demands[root].append(_KEEP)
            elif c.op.name in _VIEWS and i == 0 and self._binding is not None:
                self.root[self._binding] = root
            else:
                self.demands[root].append(_demand(c, i))
                if _is_plain_move(c) and self._binding is not None and a is root:
                    self.moves[root].append((self._binding, c.kwargs["target_memory"]))
        for v in c.kwargs.values():
            self.visit(v)

    def visit_var(self, v):               # a use outside a call argument (yield, return, iter-arg init, ...)
        if v in self.root:
            self.demands[self.root[v]].append(_KEEP)

    def visit_iter_arg(self, v):
        self.visit(v.init_value)

    def visit_assign_stmt(self, s):       # the binding of a producer is not a read of it
        self._binding = s.var if isinstance(s.value, Call) else None
        self.visit(s.value)
        self._binding = None


def _agreed_space(demands: list, producer: str) -> Optional[MemorySpace]:
    """The one landing space every reader accepts (the first reader's preference first), or None."""
    if not demands or any(d is _KEEP for d in demands):
        return None
    candidates = [_landing(s, producer) for s in demands[0]]
    common = set(candidates)
    for d in demands[1:]:
        common &= {_landing(s, producer) for s in d}
    return next((s for s in candidates if s is not None and s in common), None)


def leave_memory_to_demand(call: Call) -> Call:
    """The same tile.load / tile.create, marked so InferTileMemorySpace picks its landing space."""
    return call.replace(attrs={**call.attrs, MEMORY_BY_DEMAND: True})


def _is_retargetable_producer(s) -> bool:
    v = s.value if isinstance(s, AssignStmt) else None
    return (isinstance(v, Call) and not isinstance(v.op, GlobalVar) and v.op.name in _RETARGETABLE
            and v.attrs.get(MEMORY_BY_DEMAND) is True and not v.kwargs.get("transpose", False))


def retarget_loads_by_demand(func: Function) -> Function:
    """Retarget every tile.load / tile.create whose readers all demand one other space (see module doc)."""
    producers = {s.var: s for s in collect_statements(func.body, _is_retargetable_producer)}
    if not producers:
        return func
    readers = _Readers(set(producers))
    readers.visit(func.body)
    rebound: dict = {}          # producer var → (new var, new call)
    dropped: dict = {}          # redundant move var → the retargeted producer var
    for var, stmt in producers.items():
        call = stmt.value
        space = _agreed_space(readers.demands[var], call.op.name) or call.kwargs.get("target_memory")
        attrs = {k: v for k, v in call.attrs.items() if k != MEMORY_BY_DEMAND}
        new_call = create_op_call(call.op.name, list(call.args), {**call.kwargs, "target_memory": space},
                                  call.span, attrs or None)
        new_var = Var(var.name_hint, new_call.type, var.span)
        rebound[var] = (new_var, new_call)
        for move_var, target in readers.moves[var]:
            if target is space and space is not call.kwargs.get("target_memory"):
                dropped[move_var] = new_var
    if not rebound:
        return func
    renamed = {old: new for old, (new, _) in rebound.items()}
    renamed.update(dropped)

    class _Rewrite(SplicingMutator):
        def mutate_assign_stmt(self, s):
            if s.var in dropped:
                return SeqStmts([], s.span)
            if s.var in rebound:
                new, new_call = rebound[s.var]
                return AssignStmt(new, new_call, s.span)
            return self.mutate_children(s)

    body = _Substitute(renamed).mutate(_Rewrite().mutate(func.body))
    return func.replace(body=body)
