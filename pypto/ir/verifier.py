"""IR property verifiers: each checks one fact about a Program and returns Diagnostics.

The pass manager (pypto.passes) checks a pass's required properties before it runs and its
produced properties after; a property without a verifier here is trusted. Keys are the
property names of `pypto.passes.properties.IRProperty`.

    diags = verify_property("SSAForm", program)     # [] when the property holds
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from pypto.ir.enums import FunctionType
from pypto.ir.expr import BinaryExpr, Call, GlobalVar, MakeTuple, UnaryExpr
from pypto.ir.function import Function, Program
from pypto.ir.span import Span
from pypto.ir.stmt import ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.types import TileType, Type
from pypto.ir.visitor import IRVisitor, defined_vars  # noqa: F401  (defined_vars: re-exported)

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


class _Walker(IRVisitor):
    """Collects diagnostics while walking one function."""

    def __init__(self, func: Function, rule: str):
        self.func = func
        self.rule = rule
        self.diags: list[Diagnostic] = []

    def report(self, message: str, span=None) -> None:
        self.diags.append(Diagnostic(self.rule, f"function {self.func.name}: {message}", span))


def _verify_ssa(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        seen: set = set()
        for v in [*f.params, *defined_vars(f.body)]:
            if v in seen:
                diags.append(Diagnostic("SSAForm", f"function {f.name}: variable '{v.name_hint}' is assigned more "
                                                   "than once", v.span))
            seen.add(v)
    return diags


def _body_fields(s: Stmt) -> list:
    if isinstance(s, IfStmt):
        return [b for b in (s.then_body, s.else_body) if b is not None]
    if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
        return [s.body]
    return []


def _verify_normalized(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        w = _Walker(f, "NormalizedStmtStructure")

        class _V(IRVisitor):
            def visit_seq_stmts(self, s):
                for x in s.stmts:
                    if isinstance(x, SeqStmts):
                        w.report("a SeqStmts is nested directly inside another", x.span)
                self.visit_children(s)

            def visit_stmt(self, s):
                for b in _body_fields(s):
                    if not isinstance(b, SeqStmts):
                        w.report(f"the body of a {type(s).__name__} is not a SeqStmts", s.span)
                self.visit_children(s)

        if not isinstance(f.body, SeqStmts):
            w.report("the function body is not a SeqStmts", f.span)
        _V().visit(f.body)
        diags += w.diags
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


def _verify_no_nested_calls(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        w = _Walker(f, "NoNestedCalls")

        class _V(IRVisitor):
            def visit_call(self, c):
                if any(_has_call(a) for a in c.args):
                    w.report(f"a call is nested inside the arguments of {c.op.name}", c.span)
                self.visit_children(c)

            def visit_binary_expr(self, e):
                if _has_call(e.lhs) or _has_call(e.rhs):
                    w.report(f"a call is an operand of the scalar '{e.op}'", e.span)
                self.visit_children(e)

            def visit_unary_expr(self, e):
                if _has_call(e.operand):
                    w.report(f"a call is an operand of the scalar '{e.op}'", e.span)
                self.visit_children(e)

            def visit_if_stmt(self, s):
                if _has_call(s.condition):
                    w.report("an if condition contains a call", s.span)
                self.visit_children(s)

            def visit_while_stmt(self, s):
                if _has_call(s.condition):
                    w.report("a while condition contains a call", s.span)
                self.visit_children(s)

            def visit_for_stmt(self, s):
                if any(_has_call(x) for x in (s.start, s.stop, s.step)):
                    w.report("a loop bound contains a call", s.span)
                self.visit_children(s)

        _V().visit(f.body)
        diags += w.diags
    return diags


def _verify_split_incore_orch(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        w = _Walker(f, "SplitIncoreOrch")

        class _V(IRVisitor):
            def visit_in_core_scope_stmt(self, s):
                w.report("an InCore scope (pl.at CORE_GROUP) was not outlined", s.span)

        _V().visit(f.body)
        diags += w.diags
    return diags


def _verify_cluster_outlined(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        w = _Walker(f, "ClusterOutlined")

        class _V(IRVisitor):
            def visit_cluster_scope_stmt(self, s):
                w.report("a pl.cluster scope was not outlined into a Group function", s.span)

            def visit_spmd_scope_stmt(self, s):
                w.report("a pl.spmd scope was not outlined into an Spmd function", s.span)

        _V().visit(f.body)
        diags += w.diags
    return diags


def _verify_incore_tile_ops(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        if f.func_type not in KERNEL_TYPES:
            continue
        w = _Walker(f, "IncoreTileOps")

        class _V(IRVisitor):
            def visit_call(self, c):
                if not isinstance(c.op, GlobalVar) and c.op.name.startswith("tensor.") \
                        and c.op.name not in GM_SCALAR_OPS and c.op.name not in GM_VIEW_OPS:
                    w.report(f"tensor op {c.op.name} remains in a kernel", c.span)
                self.visit_children(c)

        _V().visit(f.body)
        diags += w.diags
    return diags


def _tile_vars(f: Function) -> list:
    return [v for v in [*f.params, *defined_vars(f.body)] if isinstance(v.type, TileType)]


def _verify_tile_memory(program: Program) -> list:
    return [Diagnostic("TileMemoryInferred", f"function {f.name}: tile '{v.name_hint}' has no memory space", v.span)
            for f in program.functions.values() for v in _tile_vars(f) if v.type.memory_space is None]


def _verify_mixed_expanded(program: Program) -> list:
    return [Diagnostic("MixedKernelExpanded", f"function {f.name} is still InCore (neither AIC nor AIV)", f.span)
            for f in program.functions.values() if f.func_type is FunctionType.InCore]


def _verify_memrefs(program: Program) -> list:
    return [Diagnostic("HasMemRefs", f"function {f.name}: tile '{v.name_hint}' has no MemRef", v.span)
            for f in program.functions.values() for v in _tile_vars(f) if v.type.memref is None]


def _verify_addresses(program: Program) -> list:
    diags = []
    for f in program.functions.values():
        w = _Walker(f, "AllocatedMemoryAddr")

        class _V(IRVisitor):
            def visit_call(self, c):
                if not isinstance(c.op, GlobalVar) and c.op.name == "tile.alloc":
                    addr = c.kwargs.get("addr", -1)
                    if not isinstance(addr, int) or addr < 0:
                        w.report("a tile.alloc has no address", c.span)
                self.visit_children(c)

        _V().visit(f.body)
        diags += w.diags
    return diags


def _verify_inlined(program: Program) -> list:
    inline = {n for n, f in program.functions.items() if f.func_type is FunctionType.Inline}
    return [Diagnostic("InlineFunctionsEliminated", f"function {n} is Inline and was not spliced into its callers",
                       program.functions[n].span) for n in inline]


def _verify_comm_domains(program: Program) -> list:
    """Every window buffer of a HOST function is a slot of exactly one CommDomainScopeStmt."""
    diags = []
    for f in program.functions.values():
        if getattr(f.level, "name", None) != "HOST":
            continue
        allocs, slots = [], []

        class _V(IRVisitor):
            def visit_assign_stmt(self, st):
                if isinstance(st.value, Call) and not isinstance(st.value.op, GlobalVar) \
                        and st.value.op.name == "pld.alloc_window_buffer":
                    allocs.append(st)
                self.visit_children(st)

            def visit_comm_domain_scope_stmt(self, st):
                slots.extend(st.buffers)
                self.visit_children(st)

        _V().visit(f.body)
        for st in allocs:
            n = sum(1 for b in slots if b is st.var)
            if n != 1:
                diags.append(Diagnostic("CommDomainScopesMaterialized", f"{f.name}: window buffer "
                                        f"'{st.var.name_hint}' is a slot of {n} comm-domain scopes, not 1", st.span))
    return diags


VERIFIERS: dict[str, Callable[[Program], list]] = {
    "SSAForm": _verify_ssa,
    "NormalizedStmtStructure": _verify_normalized,
    "NoNestedCalls": _verify_no_nested_calls,
    "SplitIncoreOrch": _verify_split_incore_orch,
    "ClusterOutlined": _verify_cluster_outlined,
    "IncoreTileOps": _verify_incore_tile_ops,
    "TileMemoryInferred": _verify_tile_memory,
    "MixedKernelExpanded": _verify_mixed_expanded,
    "HasMemRefs": _verify_memrefs,
    "AllocatedMemoryAddr": _verify_addresses,
    "InlineFunctionsEliminated": _verify_inlined,
    "CommDomainScopesMaterialized": _verify_comm_domains,
}


def verify_property(name: str, program: Program) -> list:
    """Diagnostics for one property ([] when it holds or has no verifier)."""
    fn = VERIFIERS.get(name)
    return fn(program) if fn is not None else []


def has_verifier(name: str) -> bool:
    return name in VERIFIERS
