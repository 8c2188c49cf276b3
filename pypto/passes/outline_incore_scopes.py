"""OutlineIncoreScopes: each `with pl.at(level=pl.Level.CORE_GROUP)` scope becomes an InCore function.

Requires: SSAForm / Produces: SplitIncoreOrch / Invalidates: —
Reference: pass doc 08 (compiler-and-runtime.md §2, dump 09).

The new function `<parent>_incore_<k>` (or the scope's name_hint) takes the scope's live-ins
(values defined outside, used inside) and returns its live-outs (values defined inside, used
after). A live-in tensor written inside (tile.store / tensor.assemble target) becomes an Out
param, or InOut when the scope also reads it. The parent becomes an Orchestration function.
A live-in scalar bound by `pl.tile.get_block_idx()` / `get_block_num()` (the `i` of
`for i in pl.spmd(n)`) is re-read inside the kernel instead of passed: each block asks its own.
A `pl.spmd` body with no `pl.at` scope and no function call is a kernel body in itself
(the auto-outlined spmd form): it is outlined as if wrapped in one `pl.at` scope.
The `Outliner` here is shared with OutlineClusterScopes (scope kind, function type, suffix).

    before:  def main(x, out):  with pl.at(level=CORE_GROUP): y = pl.add(x, x); out2 = pl.assemble(out, y, [0])
    after:   def main_incore_0(x, out: Out) -> Tensor: ...; return out2
             def main(x, out):  out2 = self.main_incore_0(x, out)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, GlobalVar, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import READWRITE, WRITE
from pypto.ir.stmt import AssignStmt, EvalStmt, InCoreScopeStmt, ReturnStmt, SeqStmts, SplitAivScopeStmt, SpmdScopeStmt
from pypto.ir.types import TensorType, TupleType, UnknownType
from pypto.ir.visitor import IRMutator, IRVisitor, collect, collect_statements
from pypto.passes.analysis import alpha_rename, as_seq, defined_vars, used_vars
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties

# Block-identity reads: the same value everywhere in one block, so a kernel re-reads them itself.
BLOCK_IDENTITY_OPS = ("tile.get_block_idx", "tile.get_block_num")

# Ops that write into one of their tensor arguments, when the op registry declares no effects for it.
_FALLBACK_WRITES = {"tensor.assemble": (0,), "tile.store": (2,), "tensor.write": (0,)}


def written_args(call: Call, callees: dict | None = None) -> tuple:
    """Indices of the arguments a call writes (from OpDef.effects; for a function call, its Out / InOut params)."""
    if isinstance(call.op, GlobalVar):
        f = (callees or {}).get(call.op.name)
        if f is None:
            return ()
        return tuple(i for i, d in enumerate(f.param_directions) if d is not ParamDirection.In)
    idx = tuple(i for i, eff in call.op.effects.items() if eff in (WRITE, READWRITE))
    return idx or _FALLBACK_WRITES.get(call.op.name, ())


def call_type(return_types) -> object:
    """The type of a call of a function with these return types."""
    rts = tuple(return_types)
    if not rts:
        return UnknownType()
    return rts[0] if len(rts) == 1 else TupleType(rts)


def _defers_completion(body) -> bool:
    from pypto.passes.analysis import calls_in
    return any(not isinstance(c.op, GlobalVar) and c.op.name == "pld.system.defer_wait" for c in calls_in(body))


def _region_split_attrs(body) -> dict:
    """A body holding pl.split_aiv regions marks its kernel split_aiv; the regions' mode rides along as the
    kernel's `split` only when every region has the same real (non-NONE) mode. "No split" has one
    spelling, an absent key. (LowerAutoVectorSplit checks the regions and lowers them later.)"""
    regions = collect_statements(body, lambda n: isinstance(n, SplitAivScopeStmt))
    if not regions:
        return {}
    modes = {r.split for r in regions}
    mode = next(iter(modes))
    return {"split_aiv": True, "split": mode} if len(modes) == 1 and mode.value != 0 else {"split_aiv": True}


class _UsesOutside(IRVisitor):
    def __init__(self, skip):
        self.skip = skip
        self.vars: set = set()

    def visit(self, n):
        if n is self.skip:
            return
        if isinstance(n, Var):
            self.vars.add(n)
        super().visit(n)


class _ArgAccess(IRVisitor):
    """The Vars a scope writes through call arguments (`written`) and those it reads (`other`)."""

    def __init__(self, callees: dict | None):
        self.callees = callees
        self.written: set = set()
        self.other: set = set()

    def visit_call(self, c):
        callees, written, other = self.callees, self.written, self.other
        w = written_args(c, callees)
        callee = (callees or {}).get(c.op.name) if isinstance(c.op, GlobalVar) else None
        for i, a in enumerate(c.args):
            if i in w and isinstance(a, Var):
                written.add(a)
                if callee is not None and callee.param_directions[i] is ParamDirection.InOut:
                    other.add(a)    # forwarded to an InOut param: read as well
            else:
                other.update(used_vars(a))
        for v in c.kwargs.values():
            self.visit(v)

    def visit_var(self, v):
        self.other.add(v)


def _directions(scope_body, params, callees: dict | None = None) -> list:
    access = _ArgAccess(callees)
    access.visit(scope_body)
    written, other = access.written, access.other
    out = []
    for p in params:
        if isinstance(p.type, TensorType) and p in written:
            out.append(ParamDirection.InOut if p in other else ParamDirection.Out)
        else:
            out.append(ParamDirection.In)
    return out


def _block_identity_defs(body) -> dict:
    """Var → its `tile.get_block_idx()` / `get_block_num()` call, for every such binding in body."""
    return {s.var: s.value for s in collect_statements(body, _is_block_identity_def)}


def _is_block_identity_def(s) -> bool:
    return (isinstance(s, AssignStmt) and isinstance(s.value, Call) and not isinstance(s.value.op, GlobalVar)
            and s.value.op.name in BLOCK_IDENTITY_OPS)


class Outliner(IRMutator):
    """Outlines every `scope_type` scope of one parent function into a `func_type` function.

    Shared by OutlineIncoreScopes (InCoreScopeStmt → InCore, suffix "incore") and
    OutlineClusterScopes (ClusterScopeStmt → Group "cluster", SpmdScopeStmt → Spmd "spmd").
    """

    scope_type = InCoreScopeStmt
    func_type = FunctionType.InCore
    suffix = "incore"

    def __init__(self, parent: Function, taken: set, callees: dict | None = None):
        self.callees = callees or {}     # functions of the program, for the directions of forwarded params
        self.parent = parent
        self.taken = taken
        self.new_functions: list = []
        self.parent_defs = set(parent.params) | set(defined_vars(parent.body))
        self.block_identity = _block_identity_defs(parent.body)
        self.counter = 0

    def function_attrs(self, scope) -> dict:
        # pl.split(mode) of a pl.at scope travels to the kernel as attrs["split"] (read by ExpandMixedKernel)
        split = getattr(scope, "split", None)
        attrs = {"split": split} if split is not None and split.value != 0 else {}
        for key in ("slot_num", "local_slot_num"):         # pl.cross_core_slot(...): ring depths
            if getattr(scope, key, None) is not None:
                attrs[key] = getattr(scope, key)
        if getattr(scope, "windowize", False):             # pl.at(..., windowize=True): pattern 5 opt-in
            attrs["windowize"] = True
        if _defers_completion(scope.body):                 # a task-level waiter (checked by ExpandMixedKernel)
            attrs["deferred_completion_waiter"] = True
        attrs.update(_region_split_attrs(scope.body))
        return attrs

    def _name(self, scope) -> str:
        base = scope.name_hint or f"{self.parent.name}_{self.suffix}_{self.counter}"
        self.counter += 1
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def mutate_seq_stmts(self, s: SeqStmts):
        out, changed = [], False
        for x in s.stmts:
            if isinstance(x, self.scope_type):
                out += self.outline(x)
                changed = True
            else:
                nx = self.mutate(x)
                changed |= nx is not x
                out.append(nx)
        return as_seq(out, s.span) if changed else s

    def mutate_in_core_scope_stmt(self, s):
        return as_seq(self.outline(s), s.span) if self.scope_type is InCoreScopeStmt else self.mutate_children(s)

    def check_nesting(self, scope) -> None:
        if collect_statements(scope.body, lambda n: isinstance(n, InCoreScopeStmt)):
            raise UnsupportedError("OutlineIncoreScopes: a pl.at(level=CORE_GROUP) scope is nested inside another",
                                   scope.span, hint="kernels cannot contain kernels; remove the inner pl.at")

    def outline(self, scope) -> list:
        self.check_nesting(scope)
        inside_defs = set(defined_vars(scope.body))
        live_in = [v for v in used_vars(scope.body, include_types=True)
                   if v in self.parent_defs and v not in inside_defs]
        outside = _UsesOutside(scope)
        outside.visit(self.parent.body)
        live_out = [v for v in dict.fromkeys(defined_vars(scope.body)) if v in outside.vars]
        name = self._name(scope)
        # block-identity live-ins are re-read inside (only kernels: a wrapper forwards what it gets)
        reread = [v for v in live_in if v in self.block_identity] if self.func_type is FunctionType.InCore else []
        live_in = [v for v in live_in if v not in reread]
        params = [Var(v.name_hint, v.type, v.span) for v in live_in]
        inner = [Var(v.name_hint, v.type, v.span) for v in reread]
        body, mapping = alpha_rename(scope.body, {**dict(zip(live_in, params)), **dict(zip(reread, inner))})
        ret_vals = [mapping[v] for v in live_out]
        stmts = [AssignStmt(v, self.block_identity[o], scope.span) for v, o in zip(inner, reread)]
        stmts += list(as_seq([body]).stmts)
        if ret_vals:
            stmts.append(ReturnStmt(ret_vals, scope.span))
        kernel = Function(name, params, [v.type for v in live_out], as_seq(stmts, scope.body.span),
                          self.func_type, param_directions=_directions(body, params, self.callees), span=scope.span,
                          attrs=self.function_attrs(scope))
        self.new_functions.append(kernel)
        call = Call(GlobalVar(name, scope.span), live_in, type=call_type(kernel.return_types), span=scope.span)
        if not live_out:
            return [EvalStmt(call, scope.span)]
        if len(live_out) == 1:
            return [AssignStmt(live_out[0], call, scope.span)]
        tup = Var(f"{name}_result", call.type, scope.span)
        return [AssignStmt(tup, call, scope.span)] + [
            AssignStmt(v, TupleGetItem(tup, i, scope.span), scope.span) for i, v in enumerate(live_out)]


def _implicit_spmd_kernels(body):
    """A `pl.spmd` body with no `pl.at` and no function call becomes one `pl.at` scope (auto-outlined form)."""

    class _M(IRMutator):
        def mutate_spmd_scope_stmt(self, s):
            has_scope = collect_statements(s.body, lambda n: isinstance(n, InCoreScopeStmt))
            has_call = collect(s.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar))
            if has_scope or has_call:
                return s
            return s.replace(body=as_seq([InCoreScopeStmt(s.body, span=s.span)], s.span))

    return _M().mutate(body)


def _run(program: Program) -> Program:
    taken = set(program.functions)
    out: list = []
    changed = False
    for f in program.functions.values():
        if collect_statements(f.body, lambda n: isinstance(n, SpmdScopeStmt)):
            f = f.replace(body=_implicit_spmd_kernels(f.body))
        if not collect_statements(f.body, lambda n: isinstance(n, InCoreScopeStmt)):
            out.append(f)
            continue
        if f.func_type in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV):
            raise UnsupportedError(f"OutlineIncoreScopes: kernel function {f.name} contains a pl.at(level=CORE_GROUP) "
                                   "scope", f.span, hint="write the scope's body directly in the kernel")
        o = Outliner(f, taken)
        body = o.mutate(f.body)
        parent = f.replace(body=body)
        if parent.func_type is not FunctionType.Orchestration:
            parent = parent.with_type(FunctionType.Orchestration)
        out += o.new_functions
        out.append(parent)
        changed = True
    return program.with_functions(out) if changed else program


def outline_incore_scopes() -> Pass:
    return Pass("OutlineIncoreScopes", _run, PassProperties(required={IRProperty.SSAForm},
                                                             produced={IRProperty.SplitIncoreOrch}))
