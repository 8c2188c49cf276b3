"""IR property verifiers: each checks one fact about a Program and returns Diagnostics.

The pass manager (pypto.passes) checks a pass's required properties before it runs and its
produced properties after; a property without a verifier here is trusted. Keys are the
property names of `pypto.passes.properties.IRProperty`.

    diags = verify_property("SSAForm", program)     # [] when the property holds

Every built-in property is a fact about one function at a time, checked over the function's
cached pre-order node list (`pypto.ir.visitor.preorder`: one walk serves every rule), and a
function that satisfied a property remembers it (functions are immutable): after a pass, only
the functions it changed are checked again. VERIFIERS maps a name to a Program → Diagnostics
callable; a package may register its own (e.g. expand_mixed_kernel), which is called as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from pypto.ir.enums import FunctionType
from pypto.ir.expr import BinaryExpr, Call, GlobalVar, MakeTuple, UnaryExpr
from pypto.ir.function import Function, Program
from pypto.ir.node import memo_of
from pypto.ir.span import Span
from pypto.ir.stmt import (AssignStmt, ClusterScopeStmt, CommDomainScopeStmt, ForStmt, HierarchyScopeStmt, IfStmt,
                           InCoreScopeStmt, ScopeStmt, SeqStmts, SpmdScopeStmt, Stmt, WhileStmt)
from pypto.ir.types import TileType
from pypto.ir.walks import defined_vars, preorder

KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
# Tensor ops a kernel may keep: scalar reads / writes of GM (they load and store by themselves).
GM_SCALAR_OPS = {"tensor.read", "tensor.write", "tensor.dim"}
# Zero-copy GM views a kernel may keep: loads / stores through them address the viewed tensor.
GM_VIEW_OPS = {"tensor.view"}


@dataclass(frozen=True)
class Diagnostic:
    rule: str
    message: str
    span: Optional[Span] = None

    def __str__(self) -> str:
        where = f"{self.span}: " if self.span is not None and self.span.is_known() else ""
        return f"{where}[{self.rule}] {self.message}"


def _in(f: Function, rule: str, message: str, span=None) -> Diagnostic:
    return Diagnostic(rule, f"function {f.name}: {message}", span)


def _check_ssa(f: Function) -> list:
    """Each Var is bound at most once in the body. A parameter is defined by the signature, not bound
    there, so one body binding of it is allowed (as in the reference: `dst[0:16] = fill` in a branch
    rebinds the parameter Var once)."""
    diags, seen = [], set()
    for v in defined_vars(f.body):
        if v in seen:
            diags.append(_in(f, "SSAForm", f"variable '{v.name_hint}' is assigned more than once", v.span))
        seen.add(v)
    return diags


def _body_fields(s: Stmt) -> list:
    if isinstance(s, IfStmt):
        return [b for b in (s.then_body, s.else_body) if b is not None]
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [s.body]
    return []


def _check_normalized(f: Function) -> list:
    rule = "NormalizedStmtStructure"
    diags = [] if isinstance(f.body, SeqStmts) else [_in(f, rule, "the function body is not a SeqStmts", f.span)]
    for s in preorder(f.body):
        if isinstance(s, SeqStmts):
            diags += [_in(f, rule, "a SeqStmts is nested directly inside another", x.span)
                      for x in s.stmts if isinstance(x, SeqStmts)]
        elif isinstance(s, Stmt):
            diags += [_in(f, rule, f"the body of a {type(s).__name__} is not a SeqStmts", s.span)
                      for b in _body_fields(s) if not isinstance(b, SeqStmts)]
    return diags


def _has_call(e) -> bool:
    if isinstance(e, Call):
        return True
    if isinstance(e, MakeTuple):
        return any(_has_call(x) for x in e.elements)
    if isinstance(e, BinaryExpr):
        return _has_call(e.lhs) or _has_call(e.rhs)
    if isinstance(e, UnaryExpr):
        return _has_call(e.operand)
    return False


def _nested_call(n) -> Optional[str]:
    """Why node n breaks NoNestedCalls, or None."""
    if isinstance(n, Call):
        return f"a call is nested inside the arguments of {n.op.name}" if any(_has_call(a) for a in n.args) else None
    if isinstance(n, BinaryExpr):
        return f"a call is an operand of the scalar '{n.op}'" if _has_call(n.lhs) or _has_call(n.rhs) else None
    if isinstance(n, UnaryExpr):
        return f"a call is an operand of the scalar '{n.op}'" if _has_call(n.operand) else None
    if isinstance(n, IfStmt):
        return "an if condition contains a call" if _has_call(n.condition) else None
    if isinstance(n, WhileStmt):
        return "a while condition contains a call" if _has_call(n.condition) else None
    if isinstance(n, ForStmt):
        return "a loop bound contains a call" if any(_has_call(x) for x in (n.start, n.stop, n.step)) else None
    return None


# Node classes _nested_call can object to (it returns None for every other class without a look).
_NESTED_CALL_SITES = (Call, BinaryExpr, UnaryExpr, IfStmt, WhileStmt, ForStmt)
_MAY_NEST: dict = {}             # node class → whether it is (a subclass of) one of those


def _may_nest(cls) -> bool:
    got = _MAY_NEST.get(cls)
    if got is None:
        got = _MAY_NEST[cls] = issubclass(cls, _NESTED_CALL_SITES)
    return got


def _check_no_nested_calls(f: Function) -> list:
    diags, may = [], _MAY_NEST
    for n in preorder(f.body):
        m = may.get(n.__class__)
        if m is None:
            m = _may_nest(n.__class__)
        if m:
            why = _nested_call(n)
            if why is not None:
                diags.append(_in(f, "NoNestedCalls", why, n.span))
    return diags


def _outermost(node, classes) -> list:
    """The statements of the given classes under `node` that no other such statement encloses."""
    if isinstance(node, classes):
        return [node]
    out: list = []
    for name in node._child_fields:
        value = getattr(node, name)
        for x in (value if isinstance(value, tuple) else (value,)):
            if isinstance(x, Stmt):
                out += _outermost(x, classes)
    return out


def _check_split_incore_orch(f: Function) -> list:
    return [_in(f, "SplitIncoreOrch", "an InCore scope (pl.at CORE_GROUP) was not outlined", s.span)
            for s in _outermost(f.body, InCoreScopeStmt)]


def _check_hierarchy_outlined(f: Function) -> list:
    if f.func_type is not FunctionType.Opaque:        # the pass outlines scopes of Opaque functions only
        return []
    return [_in(f, "HierarchyOutlined", "a pl.at hierarchy scope was not outlined into a level function", s.span)
            for s in _outermost(f.body, HierarchyScopeStmt)]


def _check_cluster_outlined(f: Function) -> list:
    return [_in(f, "ClusterOutlined", "a pl.cluster scope was not outlined into a Group function", s.span)
            if isinstance(s, ClusterScopeStmt) else
            _in(f, "ClusterOutlined", "a pl.spmd scope was not outlined into an Spmd function", s.span)
            for s in _outermost(f.body, (ClusterScopeStmt, SpmdScopeStmt))]


def _op_calls(f: Function) -> list:
    return [n for n in preorder(f.body) if isinstance(n, Call) and not isinstance(n.op, GlobalVar)]


def tensor_ops_in_kernel(f: Function) -> list:
    """The calls of tensor ops a kernel cannot run (GM scalar access and GM views it can)."""
    return [c for c in _op_calls(f)
            if c.op.name.startswith("tensor.") and c.op.name not in GM_SCALAR_OPS and c.op.name not in GM_VIEW_OPS]


def _check_incore_tile_ops(f: Function) -> list:
    if f.func_type not in KERNEL_TYPES:
        return []
    return [_in(f, "IncoreTileOps", f"tensor op {c.op.name} remains in a kernel", c.span)
            for c in tensor_ops_in_kernel(f)]


def _tile_vars(f: Function) -> list:
    return [v for v in [*f.params, *defined_vars(f.body)] if isinstance(v.type, TileType)]


def _check_tile_memory(f: Function) -> list:
    return [_in(f, "TileMemoryInferred", f"tile '{v.name_hint}' has no memory space", v.span)
            for v in _tile_vars(f) if v.type.memory_space is None]


def _check_mixed_expanded(f: Function) -> list:
    return ([Diagnostic("MixedKernelExpanded", f"function {f.name} is still InCore (neither AIC nor AIV)", f.span)]
            if f.func_type is FunctionType.InCore else [])


def _check_memrefs(f: Function) -> list:
    return [_in(f, "HasMemRefs", f"tile '{v.name_hint}' has no MemRef", v.span)
            for v in _tile_vars(f) if v.type.memref is None]


def _check_addresses(f: Function) -> list:
    def unplaced(c) -> bool:
        addr = c.kwargs.get("addr", -1)
        return not isinstance(addr, int) or addr < 0
    return [_in(f, "AllocatedMemoryAddr", "a tile.alloc has no address", c.span) for c in _op_calls(f)
            if c.op.name == "tile.alloc" and unplaced(c)]


def _check_inlined(f: Function) -> list:
    return ([Diagnostic("InlineFunctionsEliminated", f"function {f.name} is Inline and was not spliced into its "
                        "callers", f.span)] if f.func_type is FunctionType.Inline else [])


def _check_comm_domains(f: Function) -> list:
    """Every window buffer of a HOST function is a slot of exactly one CommDomainScopeStmt."""
    if getattr(f.level, "name", None) != "HOST":
        return []
    nodes = preorder(f.body)
    slots = [b for st in nodes if isinstance(st, CommDomainScopeStmt) for b in st.buffers]
    allocs = [st for st in nodes if isinstance(st, AssignStmt) and isinstance(st.value, Call)
              and not isinstance(st.value.op, GlobalVar) and st.value.op.name == "pld.alloc_window_buffer"]
    diags = []
    for st in allocs:
        n = sum(1 for b in slots if b is st.var)
        if n != 1:
            diags.append(Diagnostic("CommDomainScopesMaterialized", f"{f.name}: window buffer "
                                    f"'{st.var.name_hint}' is a slot of {n} comm-domain scopes, not 1", st.span))
    return diags


def per_function(name: str, check: Callable[[Function], list]) -> Callable[[Program], list]:
    """A Program verifier from a one-function check; a function that passed is not checked again."""

    def verify(program: Program) -> list:
        diags = []
        for f in program.functions.values():
            passed = memo_of(f).setdefault("verified", set())
            if name in passed:
                continue
            found = check(f)
            if found:
                diags += found
            else:
                passed.add(name)
        return diags

    verify.__name__ = f"verify_{name}"
    return verify


_CHECKS = {
    "SSAForm": _check_ssa,
    "NormalizedStmtStructure": _check_normalized,
    "NoNestedCalls": _check_no_nested_calls,
    "HierarchyOutlined": _check_hierarchy_outlined,
    "SplitIncoreOrch": _check_split_incore_orch,
    "ClusterOutlined": _check_cluster_outlined,
    "IncoreTileOps": _check_incore_tile_ops,
    "TileMemoryInferred": _check_tile_memory,
    "MixedKernelExpanded": _check_mixed_expanded,
    "HasMemRefs": _check_memrefs,
    "AllocatedMemoryAddr": _check_addresses,
    "InlineFunctionsEliminated": _check_inlined,
    "CommDomainScopesMaterialized": _check_comm_domains,
}
VERIFIERS: dict[str, Callable[[Program], list]] = {name: per_function(name, c) for name, c in _CHECKS.items()}


def verify_property(name: str, program: Program) -> list:
    """Diagnostics for one property ([] when it holds or has no verifier)."""
    fn = VERIFIERS.get(name)
    return fn(program) if fn is not None else []


def verify_properties(names, program: Program) -> dict:
    """{name: diagnostics} for several properties (each function's nodes are walked once for all)."""
    return {name: verify_property(name, program) for name in names}


def has_verifier(name: str) -> bool:
    return name in VERIFIERS
