"""ConvertTensorToTileOps phases 2a / 2b: callers of kernels that gained Out params.

    WrapperForward  — an Spmd / Group wrapper mirrors the new Out params and forwards them.
    CallSiteUpdate  — an orchestration / opaque caller allocates each with `tensor.create`
                      right before the call (inside loops too) and passes it as the extra argument.
"""

from __future__ import annotations

from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, SeqStmts
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import as_seq


class WrapperForward(IRMutator):
    """Phase 2a: the first inner call to a converted kernel gets the wrapper's new Out params appended."""

    def __init__(self, added: dict):
        self.added = added
        self.new_params: list = []

    def mutate_call(self, c: Call):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) and c.op.name in self.added and not self.new_params:
            self.new_params = [Var(p.name_hint, p.type, p.span) for p in self.added[c.op.name]]
            return c.replace(args=c.args + tuple(self.new_params))
        return c


class CallSiteUpdate(IRMutator):
    """Phase 2b: a `tensor.create` per new Out param before each call, passed as the extra argument."""

    def __init__(self, added: dict):
        self.added = added

    def mutate_seq_stmts(self, s: SeqStmts):
        out: list = []
        for x in s.stmts:
            call = x.value if isinstance(x, AssignStmt) else x.expr if isinstance(x, EvalStmt) else None
            if not self._target(call):
                out.append(self.mutate(x))
                continue
            creates = []
            for p in self.added[call.op.name]:
                create = create_op_call("tensor.create", [list(p.type.shape)], {"dtype": p.type.dtype}, call.span)
                v = Var(p.name_hint, create.type, call.span)
                creates.append(v)
                out.append(AssignStmt(v, create, call.span))
            new_call = call.replace(args=call.args + tuple(creates))
            out.append(x.replace(value=new_call) if isinstance(x, AssignStmt) else x.replace(expr=new_call))
        return as_seq(out, s.span)

    def _target(self, call) -> bool:
        return isinstance(call, Call) and isinstance(call.op, GlobalVar) and call.op.name in self.added
