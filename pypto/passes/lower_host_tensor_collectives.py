"""LowerHostTensorCollectives: host `pld.tensor.*` collectives become builtin chip dispatches.

A collective in a HOST orchestrator runs on every rank's chip. The pass adds, per call, an
InCore kernel whose body is the same collective on its window parameters (LowerCompositeOps
expands it like any InCore collective: the credit-barrier recipes of seed 001) plus an
Orchestration wrapper, and replaces the host call by a `for r in pl.range(pld.world_size())`
loop dispatching the wrapper with `device=r`; the result is the (updated) target window.
Covers allreduce, barrier, broadcast and reduce_scatter (window-only operands); the forms
taking per-rank local tensors (allgather, all_to_all, all_to_all_v) raise UnsupportedError.

Requires: signals explicit (SynthesizeAllReduceSignals) / Produces: — / Invalidates: —
Seed: 001 overview (host collectives skip LowerCompositeOps and are lowered here).

    before:  data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum)           # HOST orchestrator
    after:   for r in pl.range(pld.world_size()):
                 self.pld_builtin_allreduce_0_orch(data, sig, attrs={'device': r})
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, GlobalVar, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, ReturnStmt, SeqStmts
from pypto.ir.types import DistributedTensorType, ScalarType
from pypto.ir.visitor import SplicingMutator
from pypto.passes.manager import Pass
from pypto.passes.properties import PassProperties

WINDOW_ONLY = ("pld.tensor.allreduce", "pld.tensor.barrier", "pld.tensor.broadcast", "pld.tensor.reduce_scatter")
LOCAL_INPUTS = ("pld.tensor.allgather", "pld.tensor.all_to_all", "pld.tensor.all_to_all_v")


def _builtin_pair(name: str, call: Call, span):
    """(InCore kernel, Orchestration wrapper) running `call` on window parameters."""
    params = []
    for i, a in enumerate(call.args):
        if not isinstance(a.type, DistributedTensorType):
            raise UnsupportedError(f"host {call.op.name}: operand {i} must be a pld.window view", span)
        params.append(Var(f"w{i}", a.type, span))
    inner = create_op_call(call.op.name, params, dict(call.kwargs), span)
    res = Var("result", inner.type, span)
    dirs = [ParamDirection.InOut] * len(params)
    kernel = Function(name, params, [inner.type], SeqStmts([AssignStmt(res, inner, span), ReturnStmt([res], span)]),
                      FunctionType.InCore, param_directions=dirs, span=span)
    oparams = [Var(p.name_hint, p.type, span) for p in params]
    ores = Var("result", inner.type, span)
    orch = Function(f"{name}_orch", oparams, [inner.type], SeqStmts([
        AssignStmt(ores, Call(GlobalVar(name, span), oparams, type=inner.type, span=span), span),
        ReturnStmt([ores], span)]), FunctionType.Orchestration, param_directions=dirs, span=span)
    return kernel, orch


class _Lower(SplicingMutator):
    def __init__(self, taken: set):
        self.taken = taken
        self.added: list = []

    def _rewrite(self, call: Call, span):
        name = f"pld_builtin_{call.op.name.rsplit('.', 1)[1]}_{len(self.added) // 2}"
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        kernel, orch = _builtin_pair(name, call, span)
        self.added += [kernel, orch]
        r = Var("r", ScalarType(INDEX), span)
        dispatch = Call(GlobalVar(orch.name, span), list(call.args), type=orch.return_types[0],
                        attrs={"device": r}, span=span)
        world = create_op_call("pld.world_size", [], {}, span)
        return ForStmt(r, const(0), world, const(1), body=SeqStmts([EvalStmt(dispatch, span)], span), span=span)

    def _host_collective(self, e) -> bool:
        if not (isinstance(e, Call) and not e.is_function_call()):
            return False
        if e.op.name in LOCAL_INPUTS:
            raise UnsupportedError(f"host-level {e.op.name} (per-rank local inputs) is not lowered yet", e.span,
                                   hint="call it inside a chip kernel instead")
        return e.op.name in WINDOW_ONLY

    def mutate_assign_stmt(self, s: AssignStmt):
        if self._host_collective(s.value):
            return SeqStmts([self._rewrite(s.value, s.span), AssignStmt(s.var, s.value.args[0], s.span)], s.span)
        return s

    def mutate_eval_stmt(self, s: EvalStmt):
        if self._host_collective(s.expr):
            return self._rewrite(s.expr, s.span)
        return s


def transform_lower_host_tensor_collectives(program: Program) -> Program:
    taken = set(program.functions)
    funcs, added = [], []
    for f in program.functions.values():
        if getattr(f.level, "name", None) != "HOST":
            funcs.append(f)
            continue
        m = _Lower(taken)
        body = m.mutate(f.body)
        funcs.append(f if body is f.body else f.replace(body=body))
        added += m.added
    return program if not added else program.with_functions(funcs + added)


def lower_host_tensor_collectives() -> Pass:
    return Pass("LowerHostTensorCollectives", transform_lower_host_tensor_collectives, PassProperties())
