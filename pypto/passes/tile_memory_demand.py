"""Backward memory demand for InferTileMemorySpace: a tile.load / tile.create lands where its readers need it.

A load's `target_memory` says where GM data lands, but the readers decide where it should: a
tile that only feeds the cube (moves to Left / Right / Bias, or cube-op operands) belongs in Mat,
because GM → Mat → Left is the cube's data path and Vec → Left is none. Demands flow backward
from each reader (its OpDef.input_memory, or the move's target); a load whose readers all demand
the cube side is retargeted to Mat (operand_moves then adds the Mat → Left / Right moves the
readers need). A load any vector op, store or loop carry reads keeps its target. A tile.create
(its `target_memory` likewise names the landing space) follows the same rule.

    before:  ta = tile.load(a, ..., target_memory=Vec);  ta_left = tile.move(ta, target_memory=Left)
    after:   ta = tile.load(a, ..., target_memory=Mat);  ta_left = tile.move(ta, target_memory=Left)
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt
from pypto.ir.visitor import IRMutator, IRVisitor, substitute

_CUBE_INPUTS = {MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias, MemorySpace.Mat}
# Producers whose landing space is a kwarg: retargeted in place instead of followed by a tile.move.
_RETARGETABLE = ("tile.load", "tile.create")
_KEEP = "keep"          # a reader that needs the tile where it is (vector op, store, loop carry, call, ...)


def _demand(call: Call, i: int):
    """The spaces reader `call` accepts for argument i, or _KEEP."""
    op = call.op
    if op.name == "tile.move":
        return {MemorySpace.Mat} if call.kwargs.get("target_memory") in _CUBE_INPUTS - {MemorySpace.Mat} else _KEEP
    spaces = op.input_memory.get(i)
    return set(spaces) if spaces else _KEEP


class _Readers(IRVisitor):
    def __init__(self, loads: set):
        self.loads = loads
        self.demands: dict = {v: [] for v in loads}

    def visit_call(self, c):
        for i, a in enumerate(c.args):
            if a in self.loads:
                self.demands[a].append(_KEEP if isinstance(c.op, GlobalVar) else _demand(c, i))
            else:
                self.visit(a)
        for v in c.kwargs.values():
            self.visit(v)

    def visit_var(self, v):               # a use outside a call argument (yield, return, iter-arg init, ...)
        if v in self.loads:
            self.demands[v].append(_KEEP)

    def visit_assign_stmt(self, s):       # the binding of a load is not a read of it
        self.visit(s.value)


def _cube_only(demands: list) -> bool:
    return bool(demands) and all(d is not _KEEP and d <= _CUBE_INPUTS for d in demands)


def retarget_loads_by_demand(func: Function) -> Function:
    loads = {}

    class _Loads(IRVisitor):
        def visit_assign_stmt(self, s):
            if isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar) and s.value.op.name in _RETARGETABLE \
                    and s.value.kwargs.get("target_memory") is MemorySpace.Vec:
                loads[s.var] = s
            self.visit_children(s)

    _Loads().visit(func.body)
    if not loads:
        return func
    readers = _Readers(set(loads))
    readers.visit(func.body)
    mapping = {}
    for var, stmt in loads.items():
        if _cube_only(readers.demands[var]):
            call = stmt.value
            new_call = create_op_call(call.op.name, list(call.args), {**call.kwargs, "target_memory": MemorySpace.Mat},
                                      call.span, call.attrs or None)
            mapping[var] = (Var(var.name_hint, new_call.type, var.span), new_call)
    if not mapping:
        return func
    renamed = {old: new for old, (new, _) in mapping.items()}

    class _Rewrite(IRMutator):
        def mutate_assign_stmt(self, s):
            if s.var in mapping:
                new, new_call = mapping[s.var]
                return AssignStmt(new, new_call, s.span)
            return self.mutate_children(s)

    body = substitute(_Rewrite().mutate(func.body), renamed)
    return func.replace(body=body)

