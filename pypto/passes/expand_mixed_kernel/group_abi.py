"""ExpandMixedKernel phase 4: one shared parameter ABI for the members of a hand-written Group.

Seed 004, "手写 Group 的共享参数 ABI" and algorithm phase 4. A Group launch is one mixed task:
its AIC and AIV lanes unpack the *same* argument payload, so both member kernels must take the
Group's full parameter list in the Group's order. A Group this pass builds forwards its whole
signature already; a hand-written `pl.cluster` (or a hand-written Group function) may call
`cube(q, k, task)` and `vec(out, task)`. Each member is rebuilt on the Group's (canonical)
parameters, and both calls forward the full list:

  * union signature — the Group's params (OutlineClusterScopes captured the union of what the
    members use; ConvertTensorToTileOps already lifted kernel-internal outputs into Group params
    the caller allocates), plus any output storage still created inside the Group body, which
    is promoted to a Group param and created by every caller instead;
  * output bindings — a member argument that is another member's result (directly, through an
    alias, a tuple projection `pair[i]` or a local tuple) is traced to the producer's output
    parameter written back at that position, then to the storage passed there, i.e. to one
    Group param; producer-local SSA values are never copied into the consumer;
  * dynamic dims — a symbolic dim of a member's param type (`Tensor[[8, N]]`) is bound once to
    the matching dim of the Group param (`Tensor[[8, t + 32]]`) in every type of the clone:
    params, locals, loop carries, call results and the return types;
  * directions — a Group param is In unless the Group or a member writes it (Out / InOut);
    both members get the Group's directions;
  * no_dep marks — a `pl.no_dep` argument position of a member call (attrs `arg_direction_overrides`)
    is remapped to the Group parameter that argument binds (an omitted runtime output of a submit
    was made an explicit argument by the parser, so positions and parameters line up); the call's
    per-argument `arg_directions` describe the old list and are dropped;
  * private adapters — when either member has a call site outside this Group, the pair is
    cloned as `<group>_aic_adapter` / `<group>_aiv_adapter` (peer_func of
    `import_peer_buffer` renamed accordingly) and the originals keep their ABI for the others;
  * external members — a member whose body cannot be cloned (attrs `external_source` or
    `runtime_bound`) is accepted only when its signature already is the Group's; otherwise the
    Group is rejected, naming the member and both signatures.
No handshake is inserted: concurrent members still synchronise through their own pipes.

    before:  Group g(q, sink, out, task): self.cube(q, sink, task); r = self.vec(out, task)
    after:   AIC cube(q, sink, out, task) / AIV vec(q, sink, out, task)   (bodies unchanged)
             Group g(q, sink, out, task): self.cube(q, sink, out, task); r = self.vec(q, sink, out, task)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.equality import structural_equal
from pypto.ir.expr import BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, GlobalVar, MakeTuple, TupleGetItem, \
    UnaryExpr, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts, flatten_to_stmts
from pypto.ir.types import TupleType, Type, UnknownType
from pypto.ir.visitor import IRMutator, substitute
from pypto.passes.analysis import Retyper, alpha_rename, calls_in, substitute_type

EXTERNAL_ATTRS = ("external_source", "runtime_bound")
MEMBER_TYPES = (FunctionType.AIC, FunctionType.AIV)
_CONSTS = (ConstInt, ConstFloat, ConstBool)
_STRENGTH = {ParamDirection.In: 0, ParamDirection.Out: 1, ParamDirection.InOut: 2}


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def _subst_type(t: Type, dims: dict) -> Optional[Type]:
    """`t` with its symbolic dims bound (None when nothing changes)."""
    if not dims:
        return None
    new = substitute_type(t, dims)
    return None if new is t else new


def _member_call(stmt) -> Optional[Call]:
    c = stmt.value if isinstance(stmt, AssignStmt) else stmt.expr if isinstance(stmt, EvalStmt) else None
    return c if isinstance(c, Call) and isinstance(c.op, GlobalVar) else None


def _call_type(rets) -> Type:
    return UnknownType() if not rets else rets[0] if len(rets) == 1 else TupleType(rets)


def _written_param(func: Function, position: int) -> Optional[int]:
    """Index of the param that `func`'s return value `position` writes back (None: no carrier)."""
    stmts = flatten_to_stmts(func.body)
    ret = stmts[-1] if stmts and isinstance(stmts[-1], ReturnStmt) else None
    if ret is None or position >= len(ret.values):
        return None
    defs = {}
    for s in stmts:
        if isinstance(s, AssignStmt):
            v = s.value
            if isinstance(v, Var):
                defs[s.var] = v
            elif isinstance(v, Call) and not isinstance(v.op, GlobalVar) and v.op.reuses_input is not None:
                defs[s.var] = v.args[v.op.reuses_input]
    v, seen = ret.values[position], 0
    while v in defs and seen < 64:
        v, seen = defs[v], seen + 1
    return list(func.params).index(v) if v in func.params else None


# ---------------------------------------------------------------------------------------------
# Planning: what each member argument is in terms of the Group's parameters
# ---------------------------------------------------------------------------------------------

@dataclass
class _Site:
    """One member call inside the Group."""
    index: int                                     # position in the Group's flat body
    call: Call
    callee: Function
    binding: list = field(default_factory=list)    # per member param: ("param", k) | ("expr", Expr)


class _GroupPlan:
    """Resolves every member argument of Group `group` to a canonical Group param (or a constant)."""

    def __init__(self, group: Function, funcs: dict):
        self.group = group
        self.funcs = funcs
        self.stmts = flatten_to_stmts(group.body)
        self.defs = {s.var: s.value for s in self.stmts if isinstance(s, AssignStmt)}
        self.params = list(group.params)
        self.directions = list(group.param_directions)
        self.promoted: dict = {}                   # Group-body tensor.create Var → index of its new param
        self.sites: list[_Site] = []
        for i, s in enumerate(self.stmts):
            c = _member_call(s)
            callee = funcs.get(c.op.name) if c is not None else None
            if callee is not None and callee.func_type in MEMBER_TYPES:
                self.sites.append(_Site(i, c, callee))

    def needs_normalizing(self) -> bool:
        return any(len(s.call.args) != len(self.params) or
                   any(a is not p for a, p in zip(s.call.args, self.params)) for s in self.sites)

    def resolve_all(self) -> None:
        for site in self.sites:
            site.binding = [self._resolve(a, site) for a in site.call.args]
            for p, d, b in zip(site.callee.params, site.callee.param_directions, site.binding):
                if b[0] == "param" and _STRENGTH[d] > _STRENGTH[self.directions[b[1]]]:
                    self.directions[b[1]] = d

    def _fail(self, site: _Site, what: str, hint: str):
        raise UnsupportedError(f"ExpandMixedKernel: Group {self.group.name}: an argument of member "
                               f"{site.callee.name} {what}, so it cannot become one of the Group's "
                               "shared parameters", site.call.span, hint=hint)

    def _resolve(self, a, site: _Site, depth: int = 0):
        if depth > 64:
            self._fail(site, "is defined through a cycle", "pass a Group parameter")
        if isinstance(a, Var) and a in self.params:
            return ("param", self.params.index(a))
        if isinstance(a, _CONSTS):
            return ("expr", a)
        if isinstance(a, TupleGetItem):
            return self._project(a.tuple, a.index, site, depth + 1)
        if isinstance(a, (BinaryExpr, UnaryExpr)):
            return ("expr", self._scalar(a, site))
        if isinstance(a, Var) and a in self.defs:
            v = self.defs[a]
            if isinstance(v, (Var, TupleGetItem, BinaryExpr, UnaryExpr, *_CONSTS)):
                return self._resolve(v, site, depth + 1)
            if isinstance(v, Call) and isinstance(v.op, GlobalVar):
                return self._output_of(v, 0, site, depth)
            if isinstance(v, Call) and v.op.name in ("tensor.create", "tensor.empty"):
                return ("param", self._promote(a))
            if isinstance(v, Call):
                self._fail(site, f"is '{a.name_hint}' = {v.op.name}(...) computed in the Group body "
                                 "(a view or slice is not a whole-parameter alias)",
                           "compute it inside the member kernel, or pass the whole tensor and slice it there")
        self._fail(site, f"'{getattr(a, 'name_hint', a)}' is no Group parameter nor a member's output",
                   "pass a Group parameter")

    def _project(self, t, index: int, site: _Site, depth: int):
        """Element `index` of the tuple value `t` (a local tuple, an alias of one, or a member's result)."""
        t = self._tuple_source(t, site, depth + 1)
        if isinstance(t, MakeTuple):
            return self._resolve(t.elements[index], site, depth + 1)
        if isinstance(t, Call) and isinstance(t.op, GlobalVar):
            return self._output_of(t, index, site, depth)
        self._fail(site, "projects a tuple that no member call returned", "pass a Group parameter")

    def _tuple_source(self, t, site: _Site, depth: int):
        """Follows aliases and nested projections (`(x, y)[0][1]`) to a MakeTuple or a call."""
        for _ in range(64):
            if isinstance(t, Var) and t in self.defs:
                t = self.defs[t]
            elif isinstance(t, TupleGetItem):
                inner = self._tuple_source(t.tuple, site, depth + 1)
                if not isinstance(inner, MakeTuple):
                    self._fail(site, "projects into an element of a member's flat tuple result",
                               "members return flat tuples: project once")
                t = inner.elements[t.index]
            else:
                return t
        self._fail(site, "is defined through a cycle", "pass a Group parameter")

    def _output_of(self, producer: Call, position: int, site: _Site, depth: int):
        """Output binding: the Group param holding output `position` of member call `producer`."""
        callee = self.funcs.get(producer.op.name)
        k = _written_param(callee, position) if callee is not None else None
        if k is None:
            self._fail(site, f"is result {position} of {producer.op.name}, which no output parameter carries "
                             "(no caller-visible storage)",
                       f"make {producer.op.name} write that result into a pl.Out parameter (pl.store) and return it")
        return self._resolve(producer.args[k], site, depth + 1)

    def _scalar(self, e, site: _Site):
        """A scalar expression over Group params (substituted into the member's clone)."""
        from pypto.passes.analysis import used_vars
        for v in used_vars(e):
            if v not in self.params:
                inner = self.defs.get(v)
                if inner is None or isinstance(inner, Call):
                    self._fail(site, f"is a scalar expression reading '{v.name_hint}', computed in the Group body",
                               "pass the scalar as a Group parameter")
                e = substitute(e, {v: self._scalar(inner, site)})
        return e

    def _promote(self, buf: Var) -> int:
        """Output storage created in the Group body becomes a Group param the caller allocates."""
        if buf not in self.promoted:
            self.promoted[buf] = len(self.params)
            self.params.append(Var(buf.name_hint, buf.type, buf.span))
            self.directions.append(ParamDirection.Out)
        return self.promoted[buf]


# ---------------------------------------------------------------------------------------------
# Rebuilding members, the Group and the Group's callers
# ---------------------------------------------------------------------------------------------

def _bind_dims(site: _Site, canonical: list) -> dict:
    """Symbolic dims of the member's param types → the Group param's dims (first binding wins)."""
    dims: dict = {}
    for p, b in zip(site.callee.params, site.binding):
        if b[0] != "param":
            continue
        mt, gt = p.type, canonical[b[1]].type
        mshape, gshape = getattr(mt, "shape", None), getattr(gt, "shape", None)
        if mshape is None or gshape is None:
            continue
        if len(mshape) != len(gshape) or mt.dtype != gt.dtype:
            raise TypeCheckError(f"ExpandMixedKernel: member {site.callee.name} parameter '{p.name_hint}' is "
                                 f"{mt}, but the Group passes {gt}", site.call.span)
        for md, gd in zip(mshape, gshape):
            if isinstance(md, Var) and md not in dims and md is not gd:
                dims[md] = gd
    return dims


def _clone_member(site: _Site, canonical: list, directions: list, name: str) -> Function:
    """The member rebuilt on the canonical params (fresh Vars, own copy)."""
    f = site.callee
    fresh = [Var(p.name_hint, p.type, p.span) for p in canonical]
    dims = _bind_dims(site, canonical)
    mapping = dict(dims)
    for p, b in zip(f.params, site.binding):
        mapping[p] = fresh[b[1]] if b[0] == "param" else substitute(b[1], dict(zip(canonical, fresh)))
    body, _ = alpha_rename(f.body, mapping)
    retyper = Retyper(lambda t: _subst_type(t, dims))
    body = retyper.mutate(body)
    rets = tuple(_subst_type(t, dims) or t for t in f.return_types)
    return Function(name, fresh, rets, body, f.func_type, param_directions=directions, attrs=dict(f.attrs),
                    span=f.span)


class _PeerRename(IRMutator):
    """import_peer_buffer(peer_func=old) → the adapter that replaced `old` in this Group."""

    def __init__(self, renames: dict):
        self.renames = renames

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if not isinstance(c.op, GlobalVar) and c.op.name == "system.import_peer_buffer" \
                and c.kwargs.get("peer_func") in self.renames:
            return c.replace(kwargs={**c.kwargs, "peer_func": self.renames[c.kwargs["peer_func"]]})
        return c


def _external(f: Function) -> Optional[str]:
    return next((k for k in EXTERNAL_ATTRS if f.attrs.get(k)), None)


def _check_external(plan: _GroupPlan, site: _Site) -> None:
    key = _external(site.callee)
    if key is None:
        return
    same = len(site.callee.params) == len(plan.params) and \
        all(b == ("param", i) for i, b in enumerate(site.binding))
    if not same:
        mine = ", ".join(p.name_hint for p in site.callee.params)
        group = ", ".join(p.name_hint for p in plan.params)
        raise UnsupportedError(f"ExpandMixedKernel: Group {plan.group.name}: member {site.callee.name} is "
                               f"{key} (its body cannot be cloned) and its parameters ({mine}) differ from the "
                               f"Group's shared ABI ({group})", site.call.span,
                               hint=f"declare {site.callee.name} and its peer with the same signature "
                                    f"({group}), in the Group's order")


def _same_binding(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and (structural_equal(a[1], b[1]) if a[0] == "expr" else a[1] == b[1])


def _check_repeated(plan: _GroupPlan) -> None:
    """A member called twice in one Group gets one clone, so both calls must bind alike."""
    first: dict = {}
    for site in plan.sites:
        seen = first.setdefault(site.callee.name, site)
        if seen is not site and not all(_same_binding(a, b) for a, b in zip(seen.binding, site.binding)):
            raise UnsupportedError(f"ExpandMixedKernel: Group {plan.group.name} calls member {site.callee.name} "
                                   "twice with different arguments; one shared ABI cannot serve both calls",
                                   site.call.span, hint="call each member kernel once per Group")


def _call_sites(funcs: dict) -> dict:
    """callee name → list of caller names (one entry per call)."""
    sites: dict = {}
    for f in funcs.values():
        for c in calls_in(f.body):
            if isinstance(c.op, GlobalVar):
                sites.setdefault(c.op.name, []).append(f.name)
    return sites


def _adapter_names(plan: _GroupPlan, taken: set) -> dict:
    names: dict = {}
    for site in plan.sites:
        if site.callee.name in names:
            continue
        base = f"{plan.group.name}_{site.callee.func_type.name.lower()}_adapter"
        name, k = base, 1
        while name in taken or name in names.values():
            name, k = f"{base}_{k}", k + 1
        names[site.callee.name] = name
    return names


def _remap_call_attrs(plan: _GroupPlan, site: _Site) -> dict:
    """The member call's attrs on the widened argument list: a `pl.no_dep` position (arg_direction_overrides)
    follows its argument to that argument's Group parameter; per-argument arg_directions described the
    old list and are dropped (a direction is derived again from the Group's parameter directions)."""
    attrs = {k: v for k, v in site.call.attrs.items() if k != "arg_directions"}
    overrides = attrs.get("arg_direction_overrides")
    if not overrides:
        return attrs
    remapped = []
    for i in overrides:
        kind, where = site.binding[i]
        if kind != "param":
            raise UnsupportedError(f"ExpandMixedKernel: Group {plan.group.name}: argument {i} of member "
                                   f"{site.callee.name} is marked pl.no_dep but is no tensor of the Group "
                                   "(a constant or a computed value), so the mark cannot follow it to a Group "
                                   "parameter", site.call.span, hint="put pl.no_dep on a tensor the Group receives")
        remapped.append(where)
    attrs["arg_direction_overrides"] = sorted(set(remapped))
    return attrs


def _rewrite_group(plan: _GroupPlan, members: dict) -> Function:
    g = plan.group
    params = plan.params
    value_map = {buf: params[k] for buf, k in plan.promoted.items()}
    by_index = {s.index: s for s in plan.sites}
    out = []
    for i, s in enumerate(plan.stmts):
        if isinstance(s, AssignStmt) and s.var in plan.promoted:
            continue                                               # the caller allocates it now
        site = by_index.get(i)
        if site is None:
            out.append(substitute(s, value_map))
            continue
        member = members[site.callee.name]
        call = Call(GlobalVar(member.name, site.call.span), params, site.call.kwargs,
                    _call_type(member.return_types), _remap_call_attrs(plan, site), site.call.span)
        if isinstance(s, AssignStmt):
            var = s.var
            if var.type is not call.type:              # the normalized return type (bound dims)
                var = Var(s.var.name_hint, call.type, s.var.span)
                value_map[s.var] = var
            out.append(AssignStmt(var, call, s.span))
        else:
            out.append(EvalStmt(call, s.span))
    return g.replace(params=tuple(params), param_directions=tuple(plan.directions), body=SeqStmts(out, g.body.span))


class _AllocateForGroup(IRMutator):
    """Callers of a Group with promoted storage: `buf = tensor.create(...)` before the call."""

    def __init__(self, group: str, promoted: list):
        self.group = group
        self.promoted = promoted                   # [(template Var, create Call)]

    def mutate_seq_stmts(self, seq):
        from pypto.ir.ops.registry import create_op_call
        new = []
        for s in seq.stmts:
            s = self.mutate(s)
            c = _member_call(s)
            if c is not None and c.op.name == self.group:
                extra = []
                for var, create in self.promoted:
                    buf = Var(var.name_hint, var.type, s.span)
                    new.append(AssignStmt(buf, create_op_call(create.op.name, list(create.args), dict(create.kwargs),
                                                              s.span), s.span))
                    extra.append(buf)
                c2 = c.replace(args=(*c.args, *extra))
                s = s.replace(value=c2) if isinstance(s, AssignStmt) else s.replace(expr=c2)
            new.append(s)
        return seq.replace(stmts=tuple(new))


def normalize_group_abis(program: Program) -> Program:
    """Phase 4 of ExpandMixedKernel (see the module docstring)."""
    funcs = dict(program.functions)
    groups = [f for f in funcs.values() if f.func_type is FunctionType.Group]
    callers = _call_sites(funcs)          # counted once: a Group's adapters do not free a member for the next
    changed = False
    for g in groups:
        plan = _GroupPlan(funcs[g.name], funcs)
        if not plan.sites or not plan.needs_normalizing():
            continue
        plan.resolve_all()
        for site in plan.sites:
            _check_external(plan, site)
        _check_repeated(plan)
        shared = any(len(callers.get(s.callee.name, [])) > 1 for s in plan.sites) or \
            len({s.callee.name for s in plan.sites}) < len(plan.sites)
        names = _adapter_names(plan, set(funcs)) if shared else {s.callee.name: s.callee.name for s in plan.sites}
        renames = {old: new for old, new in names.items() if old != new}
        members: dict = {}
        for site in plan.sites:
            if site.callee.name in members:
                continue
            if _external(site.callee):
                members[site.callee.name] = site.callee
                continue
            clone = _clone_member(site, plan.params, plan.directions, names[site.callee.name])
            if renames:
                clone = clone.replace(body=_PeerRename(renames).mutate(clone.body))
            members[site.callee.name] = clone
        for old, member in members.items():
            if member is not funcs[old] or member.name != old:
                funcs[member.name] = member
        funcs[g.name] = _rewrite_group(plan, members)
        if plan.promoted:
            allocs = [(var, plan.defs[var]) for var in plan.promoted]
            mut = _AllocateForGroup(g.name, allocs)
            for name, f in list(funcs.items()):
                if name != g.name:
                    funcs[name] = f.replace(body=mut.mutate(f.body))
        changed = True
    return program.with_functions(list(funcs.values())) if changed else program
