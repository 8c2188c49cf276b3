"""OutlineHierarchyScopes: each `with pl.at(level=..., role=...)` scope above the cores becomes a function.

Requires: SSAForm / Produces: HierarchyOutlined / Invalidates: —
Reference: pass doc 07 (runs before OutlineIncoreScopes).

A hierarchy scope (`pl.at` at CHIP, HOST, ... level; a CORE_GROUP `pl.at` is an InCore scope and
is OutlineIncoreScopes' business) becomes an Opaque function carrying the scope's level and role,
named `<parent>_<level>[_<role>]_<k>` (or the scope's name_hint), with the scope's live-ins as
parameters and its live-outs as results — the same analysis as kernel outlining. The parent's
function type is kept. A nested hierarchy scope is outlined from the function its parent scope
became, so names chain (`main_global_orch_0_host_orch_0`). Kernel scopes inside stay where they
are: OutlineIncoreScopes then turns the outlined CHIP function into the orchestration that
launches them. This is how a HOST orchestrator writes its chip work inline:

    before:  def host_orch(a, b, out):  with pl.at(level=CHIP, role=Orchestrator): with pl.at(level=CORE_GROUP): ...
    after:   def host_orch_chip_orch_0(a, b, out: Out): with pl.at(level=CORE_GROUP): ...   # level CHIP, Orchestrator
             def host_orch(a, b, out):  out2 = self.host_orch_chip_orch_0(a, b, out)
"""

from __future__ import annotations

from pypto.ir.enums import FunctionType, Level, Role
from pypto.ir.function import Program
from pypto.ir.stmt import HierarchyScopeStmt
from pypto.ir.visitor import collect_statements
from pypto.passes.base import Pass
from pypto.passes.outline_incore_scopes import Outliner
from pypto.passes.properties import IRProperty, PassProperties

# Name suffixes of the reference (level aliases resolve to their canonical level first).
_LEVEL_SUFFIX = {Level.AIV: "aiv", Level.AIC: "aic", Level.CORE_GROUP: "core_group", Level.CHIP_DIE: "chip_die",
                 Level.CHIP: "chip", Level.HOST: "host", Level.CLUSTER_0: "cluster0", Level.CLUSTER_1: "cluster1",
                 Level.CLUSTER_2: "cluster2", Level.GLOBAL: "global"}
_ROLE_SUFFIX = {Role.Orchestrator: "orch", Role.SubWorker: "worker"}


class _HierarchyOutliner(Outliner):
    scope_type = HierarchyScopeStmt
    func_type = FunctionType.Opaque

    def check_nesting(self, scope) -> None:     # nested hierarchy scopes are outlined in a later round
        pass

    def mutate_hierarchy_scope_stmt(self, s):   # a scope below a statement (in a loop or a branch)
        from pypto.passes.analysis import as_seq
        return as_seq(self.outline(s), s.span)

    def function_attrs(self, scope) -> dict:
        return {}

    def _name(self, scope) -> str:
        self.suffix = _LEVEL_SUFFIX.get(scope.level, scope.level.name.lower())
        if scope.role in _ROLE_SUFFIX:
            self.suffix += "_" + _ROLE_SUFFIX[scope.role]
        return super()._name(scope)

    def outline(self, scope) -> list:
        stmts = super().outline(scope)
        f = self.new_functions[-1]
        self.new_functions[-1] = f.replace(level=scope.level, role=scope.role)
        return stmts


def _has_scope(f) -> bool:
    return bool(collect_statements(f.body, lambda n: isinstance(n, HierarchyScopeStmt)))


def _run(program: Program) -> Program:
    while True:             # one nesting level per round: an outlined function may hold the next scope
        todo = [f for f in program.functions.values() if f.func_type is FunctionType.Opaque and _has_scope(f)]
        if not todo:
            return program
        taken = set(program.functions)
        out: list = []
        for f in program.functions.values():
            if f not in todo:
                out.append(f)
                continue
            # counters are per parent function, as in the reference (each parent starts at 0)
            o = _HierarchyOutliner(f, taken, program.functions)
            parent = f.replace(body=o.mutate(f.body))
            out += o.new_functions
            out.append(parent)
        program = program.with_functions(out)


def outline_hierarchy_scopes() -> Pass:
    return Pass("OutlineHierarchyScopes", _run, PassProperties(required={IRProperty.SSAForm},
                                                                produced={IRProperty.HierarchyOutlined}))
