"""LowerHostTensorCollectives: host `pld.tensor.*` collectives become builtin chip dispatches.

A collective in a HOST orchestrator runs on every rank's chip of its comm domain. Per call, the
pass builds a builtin chip program — an InCore kernel whose body is the same collective on its
parameters plus an Orchestration wrapper — and compiles it as a sub-build through the chip
pipeline (`chip_pipeline.CHIP_PIPELINE`, the passes before the host path: LowerCompositeOps expands
the collective into the credit-barrier recipe of seed 001, the memory passes place its tiles), as
the reference builds each chip orchestration separately. The host call becomes a dispatch of the
wrapper on every rank of the comm domain holding the call's windows (`for r in pl.range(pld.world_size())`
for a world domain, one constant `device=d` dispatch per member of a subset domain: the recipes
address peers by domain rank, which the runtime maps to world ranks); the result is the updated window.

`core_num=k` on a host allreduce builds a different builtin: a grid of k synchronized AIV blocks
per rank, each reducing its block-cyclic share of the payload on its own signal lane
(multicore_allreduce.py).

Operands: window views are passed as they are. A plain host tensor operand (the local input of
allgather / all_to_all / all_to_all_v and the send counts of all_to_all_v) is a stacked per-rank
tensor: rank r's operand is its shard `x[r]` (leading dimension = ranks), read-only in the kernel.

Requires: CommDomainScopesMaterialized / Produces: — / Invalidates: —
Seed: 001 overview (host collectives skip LowerCompositeOps and are lowered here); §2 row 43.

    before:  data = pld.tensor.allgather(x, data, sig)                          # HOST orchestrator
    after:   for r in pl.range(pld.world_size()):
                 x_r = pld.stacked_index(x, r); self.pld_builtin_allgather_0_orch(x_r, data, sig, attrs={'device': r})
"""

from __future__ import annotations

from pypto.errors import TypeCheckError, ValueCheckError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, GlobalVar, MakeTuple, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, CommDomainScopeStmt, EvalStmt, ForStmt, ReturnStmt, SeqStmts
from pypto.ir.types import DistributedTensorType, ScalarType, TensorType
from pypto.ir.visitor import SplicingMutator
from pypto.passes.base import Pass, run_pipeline
from pypto.passes.chip_pipeline import CHIP_PIPELINE
from pypto.passes.context import PassContext
from pypto.passes.materialize_comm_domain_scopes import (HOST_COLLECTIVES, RESULT_ALIASES, assignment_defs,
                                                          is_host_orchestrator, window_buffer_of)
from pypto.passes.lower_host_tensor_collectives import multicore_allreduce
from pypto.passes.lower_host_tensor_collectives.multicore_allreduce import core_num_of
from pypto.passes.properties import IRProperty, PassProperties

def _stacked(call: Call, i: int, a) -> bool:
    """A plain host tensor operand: rank r uses its shard a[r]."""
    if isinstance(a.type, DistributedTensorType):
        return False
    if not isinstance(a.type, TensorType) or len(a.type.shape) < 2:
        raise TypeCheckError(f"host {call.op.name}: operand {i} must be a pld.window view or a stacked per-rank "
                             f"host tensor [ranks, ...]", call.span,
                             hint="rank r's local input is x[r]; give the host tensor a leading rank dimension")
    return True


def _flat_signal(call: Call, i: int, a) -> bool:
    """A rank-1 `[NR]` signal window (the host form the reference's builtins take): the kernel sees it as
    the `[NR, 1]` mesh signal the credit-barrier recipes address (same bytes, one cell per rank)."""
    names = call.op.args
    return i < len(names) and names[i] == "signal" and isinstance(a.type, DistributedTensorType) \
        and len(a.type.shape) == 1


def _builtin_pair(name: str, call: Call, span) -> list:
    """(InCore kernel, Orchestration wrapper) running `call` on per-rank operands."""
    params, dirs = [], []
    for i, a in enumerate(call.args):
        if _stacked(call, i, a):
            params.append(Var(f"local{i}", TensorType(a.type.shape[1:], a.type.dtype), span))
            dirs.append(ParamDirection.In)
        else:
            # a fresh type: the host value's MemRef (InitMemRef ran on the host function) is not the kernel's
            shape = (a.type.shape[0], const(1)) if _flat_signal(call, i, a) else a.type.shape
            params.append(Var(f"w{i}", DistributedTensorType(shape, a.type.dtype,
                                                              tensor_view=a.type.tensor_view), span))
            dirs.append(ParamDirection.InOut)
    inner = create_op_call(call.op.name, params, dict(call.kwargs), span)
    res = Var("result", inner.type, span)
    kernel = Function(name, params, [inner.type], SeqStmts([AssignStmt(res, inner, span), ReturnStmt([res], span)]),
                      FunctionType.InCore, param_directions=dirs, span=span)
    oparams = [Var(p.name_hint, p.type, span) for p in params]
    ores = Var("result", inner.type, span)
    orch = Function(f"{name}_orch", oparams, [inner.type], SeqStmts([
        AssignStmt(ores, Call(GlobalVar(name, span), oparams, type=inner.type, span=span), span),
        ReturnStmt([ores], span)]), FunctionType.Orchestration, param_directions=dirs, span=span)
    return [kernel, orch]


def _signature(call: Call) -> tuple:
    """What a builtin depends on: the op, its kwargs and each operand's kind, shape and dtype."""
    def dims(t):
        return tuple(getattr(d, "value", repr(d)) for d in t.shape)
    return (call.op.name, tuple(sorted((k, repr(v)) for k, v in call.kwargs.items())),
            tuple((type(a.type).__name__, dims(a.type), a.type.dtype.name) for a in call.args))


def _collective_attrs(call: Call) -> dict:
    attrs = {"host_collective": call.op.name}
    if "op" in call.kwargs:
        attrs["collective_op"] = call.kwargs["op"].name
    if "root" in call.kwargs:
        attrs["collective_root"] = int(call.kwargs["root"])
    if call.kwargs.get("mode", "mesh") != "mesh":
        attrs["collective_mode"] = call.kwargs["mode"]
    return attrs


def sub_build(functions: list, name: str) -> Program:
    """Run the chip pipeline on a small program (the builtin's own build)."""
    outer = PassContext.current()           # same platform, checks and parser, without the caller's instruments
    with outer.derive(keep_instruments=False):
        return run_pipeline(CHIP_PIPELINE, Program(functions, name))


class _Lower(SplicingMutator):
    def __init__(self, taken: set, defs: dict):
        self.taken = taken
        self.defs = defs
        self.scopes: list = []
        self.added: list = []
        self.built: dict = {}                       # collective signature -> its builtin's Orchestration wrapper

    def mutate_comm_domain_scope_stmt(self, s: CommDomainScopeStmt):
        self.scopes.append(s)
        try:
            body = self.mutate(s.body)
        finally:
            self.scopes.pop()
        return s if body is s.body else s.replace(body=body)

    def _scope_for(self, call: Call) -> CommDomainScopeStmt:
        buffers = [window_buffer_of(a, self.defs) for a in call.args if isinstance(a.type, DistributedTensorType)]
        for scope in reversed(self.scopes):
            if all(any(b is slot for slot in scope.buffers) for b in buffers):
                return scope
        raise ValueCheckError(f"host {call.op.name}: its windows are not all in one comm domain", call.span,
                              hint="every window of a host collective must come from pld.alloc_window_buffer in this "
                                   "function and be used by the same devices")

    def _rewrite(self, call: Call, span):
        scope = self._scope_for(call)
        key = _signature(call)
        orch = self.built.get(key)
        if orch is None:                             # one builtin per distinct collective signature
            name = f"pld_builtin_{call.op.name.rsplit('.', 1)[1]}_{len(self.built)}"
            while name in self.taken or f"{name}_orch" in self.taken:
                name += "_"
            if call.op.name == "pld.tensor.allreduce" and core_num_of(call) > 1:
                built = sub_build(multicore_allreduce.builtin_functions(name, call), name)
            else:
                built = sub_build(_builtin_pair(name, call, span), name)
            self.taken |= set(built.functions)
            # the wrapper says which collective it runs: the simulator may run it as a runtime builtin
            orch = built.functions[f"{name}_orch"]
            orch = orch.replace(attrs={**orch.attrs, **_collective_attrs(call)})
            self.added += [orch if f.name == orch.name else f for f in built.functions.values()]
            self.built[key] = orch
        if scope.devices is not None:
            # a subset domain: one dispatch per member; the recipes number peers inside the domain
            return [self._dispatch(call, orch, const(d), span) for d in scope.devices]
        r = Var("r", ScalarType(INDEX), span)
        size = create_op_call("pld.world_size", [], {}, span)
        world = Var("world", size.type, span)
        loop = ForStmt(r, const(0), world, const(1), body=self._dispatch(call, orch, r, span), span=span)
        return [AssignStmt(world, size, span), loop]

    def _dispatch(self, call: Call, orch: Function, device, span) -> SeqStmts:
        stmts, args = [], []
        for i, a in enumerate(call.args):
            if _stacked(call, i, a):
                shard = create_op_call("pld.stacked_index", [a, device], {}, span)
                v = Var(f"{a.name_hint if isinstance(a, Var) else 'x'}_r", shard.type, span)
                stmts.append(AssignStmt(v, shard, span))
                a = v
            elif _flat_signal(call, i, a):
                buf = window_buffer_of(a, self.defs)
                if buf is None:
                    raise ValueCheckError(f"host {call.op.name}: cannot tell which window buffer the signal views",
                                          call.span, hint="view the signal with pld.window(buf, [n], dtype=pl.INT32)")
                view = create_op_call("pld.window", [buf, MakeTuple([a.type.shape[0], const(1)])],
                                      {"dtype": a.type.dtype}, span)
                v = Var(f"{a.name_hint if isinstance(a, Var) else 'signal'}_2d", view.type, span)
                stmts.append(AssignStmt(v, view, span))
                a = v
            args.append(a)
        dispatch = Call(GlobalVar(orch.name, span), args, type=orch.return_types[0], attrs={"device": device},
                        span=span)
        return SeqStmts(stmts + [EvalStmt(dispatch, span)], span)

    def _host_collective(self, e) -> bool:
        return isinstance(e, Call) and not e.is_function_call() and e.op.name in HOST_COLLECTIVES

    def mutate_assign_stmt(self, s: AssignStmt):
        if self._host_collective(s.value):
            result = s.value.args[RESULT_ALIASES.get(s.value.op.name, 0)]
            return SeqStmts(self._rewrite(s.value, s.span) + [AssignStmt(s.var, result, s.span)], s.span)
        return s

    def mutate_eval_stmt(self, s: EvalStmt):
        if self._host_collective(s.expr):
            return SeqStmts(self._rewrite(s.expr, s.span), s.span)
        return s


def transform_lower_host_tensor_collectives(program: Program) -> Program:
    taken = set(program.functions)
    funcs, added = [], []
    for f in program.functions.values():
        if not is_host_orchestrator(f):
            funcs.append(f)
            continue
        m = _Lower(taken, assignment_defs(f.body))
        body = m.mutate(f.body)
        funcs.append(f if body is f.body else f.replace(body=body))
        added += m.added
    return program if not added else program.with_functions(funcs + added)


def lower_host_tensor_collectives() -> Pass:
    return Pass("LowerHostTensorCollectives", transform_lower_host_tensor_collectives,
                PassProperties(required={IRProperty.CommDomainScopesMaterialized}))
