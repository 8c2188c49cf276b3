"""MaterializeCommDomainScopes: a HOST orchestrator's window buffers are grouped into comm domains.

A communication domain is the set of ranks that share some symmetric windows (the runtime
allocates one window region per domain and gives each member its CommContext). The pass traces
every `pld.alloc_window_buffer` through the `pld.window` views made of it to the chip dispatches
(`self.chip(..., device=r)`) and host collectives that use those views, infers which ranks touch
each buffer (`device=` a constant, or the index of a `pl.range(pld.world_size())` / constant-range
loop; a host collective runs on the devices its windows are dispatched to, every rank when they are
not dispatched at all), and wraps the rest of the host body in one
`CommDomainScopeStmt` per distinct rank set (outer = the first declared). The allocations with
constant sizes are hoisted to the top (they only reserve memory), so the scope follows them and
its `buffers` name them: the view → buffer back-reference is the view's `pld.window(buf, ...)`
argument, `window_buffer_of` resolves it for later passes.

Requires: — / Produces: CommDomainScopesMaterialized / Invalidates: —
Seed: compiler-and-runtime.md §2 row 42 (the distributed host path of seed 001's overview).

    before:  b = pld.alloc_window_buffer([1, 64], dtype=pl.FP32); d = pld.window(b, ...)
             for r in pl.range(pld.world_size()): self.k(d, device=r)
    after:   b = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)
             with pld.comm_domain([b], name_hint='comm_d0'): d = pld.window(b, ...); for r in ...: self.k(d, device=r)
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.enums import FunctionType, Level, Role
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, CommDomainScopeStmt, ForStmt, SeqStmts, flatten_to_stmts
from pypto.ir.visitor import IRVisitor
from pypto.passes.analysis import calls_in
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties

ALL = None                       # the device descriptor "every rank of the world"
HOST_COLLECTIVES = ("pld.tensor.allreduce", "pld.tensor.barrier", "pld.tensor.broadcast",
                    "pld.tensor.reduce_scatter", "pld.tensor.allgather", "pld.tensor.all_to_all",
                    "pld.tensor.all_to_all_v")
# which argument a collective's result aliases (the updated window)
RESULT_ALIASES = {"pld.tensor.allgather": 1, "pld.tensor.all_to_all": 1, "pld.tensor.all_to_all_v": 1}


def is_host_orchestrator(f: Function) -> bool:
    return f.level is Level.HOST and (f.role in (Role.Orchestrator, None) or f.func_type is FunctionType.Orchestration)


def _op_name(e) -> Optional[str]:
    return e.op.name if isinstance(e, Call) and not isinstance(e.op, GlobalVar) else None


def window_buffer_of(view, defs: dict) -> Optional[Var]:
    """The `pld.alloc_window_buffer` Var a DistributedTensor value was viewed from (None: not traceable).

    Follows plain copies (`d1 = d`), `pld.window(buf, ...)` and collective results (which alias their target)."""
    seen = set()
    while isinstance(view, Var) and view not in seen:
        seen.add(view)
        value = defs.get(view)
        name = _op_name(value)
        if name == "pld.alloc_window_buffer":
            return view
        if name == "pld.window":
            view = value.args[0]
        elif name in HOST_COLLECTIVES:
            view = value.args[RESULT_ALIASES.get(name, 0)]
        elif isinstance(value, Var):
            view = value
        else:
            return None
    return None


class _Defs(IRVisitor):
    """Var → bound value for every AssignStmt of a body; a loop-carried window (`data = allreduce(data)` in
    a `pl.range` / `pl.unroll` body) traces to its initial value, and a loop's result to the carried value."""

    def __init__(self):
        self.defs: dict = {}

    def visit_assign_stmt(self, s: AssignStmt):
        self.defs[s.var] = s.value
        self.visit_children(s)

    def visit_for_stmt(self, s: ForStmt):
        for ia, rv in zip(s.iter_args, s.return_vars):
            self.defs[ia] = ia.init_value
            self.defs[rv] = ia
        self.visit_children(s)


def assignment_defs(body) -> dict:
    v = _Defs()
    v.visit(body)
    return v.defs


class _Coverage(IRVisitor):
    """Which ranks touch each window buffer: dispatch `device=` values and host collectives."""

    def __init__(self, defs: dict, buffers: list):
        self.defs = defs
        self.loops: list = []
        self.seen: dict = {b: [] for b in buffers}
        self.collectives: list = []              # the window buffers of each host collective call

    def visit_for_stmt(self, s: ForStmt):
        self.loops.append(s)
        self.visit_children(s)
        self.loops.pop()

    def visit_call(self, c: Call):
        self.visit_children(c)
        if isinstance(c.op, GlobalVar):
            device = (c.attrs or {}).get("device")
            if device is not None:
                self._record(c.args, self._devices(device, c))
        elif c.op.name in HOST_COLLECTIVES:
            self.collectives.append([b for b in (window_buffer_of(a, self.defs) for a in c.args) if b in self.seen])

    def resolve_collectives(self) -> None:
        """A host collective runs on the devices its windows are dispatched to (all ranks when none is)."""
        for bufs in self.collectives:
            used = [d for b in bufs for d in self.seen[b]]
            desc = _merge(used)
            for b in bufs:
                self.seen[b].append(desc)

    def _record(self, args, desc) -> None:
        for a in args:
            buf = window_buffer_of(a, self.defs)
            if buf is not None and buf in self.seen:
                self.seen[buf].append(desc)

    def _unwrap(self, e):
        while isinstance(e, Var) and isinstance(self.defs.get(e), (Call, ConstInt, Var)):
            e = self.defs[e]
        return e

    def _devices(self, device, call):
        device = self._unwrap(device)
        if isinstance(device, ConstInt):
            return frozenset({device.value})
        for loop in reversed(self.loops):
            if loop.loop_var is device:
                stop = self._unwrap(loop.stop)
                if _op_name(stop) == "pld.world_size":
                    return ALL
                start, step = self._unwrap(loop.start), self._unwrap(loop.step)
                if all(isinstance(x, ConstInt) for x in (start, stop, step)) and step.value > 0:
                    return frozenset(range(start.value, stop.value, step.value))
                raise UnsupportedError(f"dispatch of '{call.op.name}': device= loops over a range that is neither "
                                       "pld.world_size() nor constant", call.span,
                                       hint="for r in pl.range(pld.world_size()): ... device=r")
        raise UnsupportedError(f"dispatch of '{call.op.name}': device= must be a constant or the index of an "
                               "enclosing pl.range loop", call.span, hint="for r in pl.range(pld.world_size())")


def _merge(descs: list):
    if not descs or any(d is ALL for d in descs):
        return ALL                               # an unused buffer still lives in the all-rank domain
    out: set = set()
    for d in descs:
        out |= d
    return frozenset(out)


def _constant_size(call: Call) -> bool:
    size = call.args[0]
    elements = size.elements if isinstance(size, MakeTuple) else (size,)
    return all(isinstance(x, ConstInt) for x in elements)


def _is_alloc(s) -> bool:
    return isinstance(s, AssignStmt) and _op_name(s.value) == "pld.alloc_window_buffer"


def transform_function(f: Function) -> Function:
    stmts = flatten_to_stmts(f.body)
    if any(isinstance(s, CommDomainScopeStmt) for s in stmts):
        return f                                 # already materialized (idempotent)
    top_allocs = [s for s in stmts if _is_alloc(s)]
    nested = [c for c in calls_in(f.body) if _op_name(c) == "pld.alloc_window_buffer"]
    if len(nested) != len(top_allocs):
        raise UnsupportedError("pld.alloc_window_buffer inside a loop or branch of a HOST orchestrator",
                               nested[0].span, hint="allocate every window once, at the top level of the host body")
    if not top_allocs:
        return f
    hoisted = [s for s in top_allocs if _constant_size(s.value)]
    rest = [s for s in stmts if not any(s is h for h in hoisted)]
    last = max((i for i, s in enumerate(rest) if _is_alloc(s)), default=-1)
    prefix, inner = hoisted + rest[:last + 1], rest[last + 1:]
    defs = assignment_defs(f.body)
    buffers = [s.var for s in top_allocs]
    cov = _Coverage(defs, buffers)
    cov.visit(f.body)
    cov.resolve_collectives()
    domains: list = []                           # [(descriptor, [buffers])] in declaration order
    for b in buffers:
        desc = _merge(cov.seen[b])
        for d, members in domains:
            if d == desc:
                members.append(b)
                break
        else:
            domains.append((desc, [b]))
    body = SeqStmts(inner, f.body.span)
    for i in reversed(range(len(domains))):
        desc, members = domains[i]
        devices = None if desc is ALL else sorted(desc)
        if devices is not None and not devices:
            raise ValueCheckError(f"window buffer '{members[0].name_hint}' is dispatched to no device", f.span)
        body = CommDomainScopeStmt(body, members, devices, f"comm_d{i}", f.body.span)
        if i:
            body = SeqStmts([body], f.body.span)     # a scope's body is a sequence, as the parser builds it
    return f.replace(body=SeqStmts(prefix + [body], f.body.span))


def transform_materialize_comm_domain_scopes(program: Program) -> Program:
    funcs = [transform_function(f) if is_host_orchestrator(f) else f for f in program.functions.values()]
    if all(a is b for a, b in zip(funcs, program.functions.values())):
        return program
    return program.with_functions(funcs)


def materialize_comm_domain_scopes() -> Pass:
    return Pass("MaterializeCommDomainScopes", transform_materialize_comm_domain_scopes,
                PassProperties(produced={IRProperty.CommDomainScopesMaterialized}))
