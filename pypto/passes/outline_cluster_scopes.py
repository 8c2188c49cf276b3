"""OutlineClusterScopes: `with pl.cluster()` → a Group function; a standalone `pl.spmd` → an Spmd wrapper.

Requires: SSAForm / Produces: ClusterOutlined / Invalidates: —
Reference: pass doc 09 (compiler-and-runtime.md §2, dump 10); seed 003 phase 2a consumes its wrappers.

Runs after OutlineIncoreScopes, so a scope's body is by now calls of InCore kernels (plus
scalar glue). Each scope becomes `<parent>_cluster_<k>` (FunctionType.Group) or
`<parent>_spmd_<k>` (FunctionType.Spmd), or the scope's name_hint, with the same live-in /
live-out analysis as kernel outlining. An Spmd wrapper carries `core_num` / `sync_start` in
its attrs (the simulator and the launch read them from there); block-index reads left in a
wrapper body after outlining (the kernel re-reads its own) are dropped.

    before:  def main(x, out):  with pl.spmd(4): out2 = self.main_incore_0(x, out)
    after:   def main_spmd_0(x, out: Out) -> Tensor: out2 = self.main_incore_0(x, out); return out2   # attrs core_num=4
             def main(x, out):  out2 = self.main_spmd_0(x, out)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, ConstInt, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ClusterScopeStmt, SeqStmts, SpmdScopeStmt
from pypto.ir.visitor import IRMutator, collect_statements
from pypto.passes.analysis import used_vars
from pypto.passes.base import Pass
from pypto.passes.outline_incore_scopes import BLOCK_IDENTITY_OPS, Outliner
from pypto.passes.properties import IRProperty, PassProperties


class _ClusterOutliner(Outliner):
    scope_type = ClusterScopeStmt
    func_type = FunctionType.Group
    suffix = "cluster"

    def check_nesting(self, scope) -> None:
        if collect_statements(scope.body, lambda n: isinstance(n, ClusterScopeStmt)):
            raise UnsupportedError("OutlineClusterScopes: a pl.cluster scope is nested inside another", scope.span,
                                   hint="one pl.cluster groups the kernels of one physical cluster")

    def mutate_spmd_scope_stmt(self, s):     # an spmd inside a cluster stays in the Group body
        return s


class _SpmdOutliner(Outliner):
    scope_type = SpmdScopeStmt
    func_type = FunctionType.Spmd
    suffix = "spmd"

    def check_nesting(self, scope) -> None:
        if collect_statements(scope.body, lambda n: isinstance(n, SpmdScopeStmt)):
            raise UnsupportedError("OutlineClusterScopes: a pl.spmd scope is nested inside another", scope.span,
                                   hint="launch one spmd grid at a time")

    def function_attrs(self, scope) -> dict:
        n = scope.core_num
        if not isinstance(n, ConstInt):
            raise UnsupportedError("OutlineClusterScopes: pl.spmd with a core count that is not a compile-time "
                                   "integer", scope.span, hint="write pl.spmd(4), a literal block count")
        return {"core_num": n.value, "sync_start": scope.sync_start}


def _drop_dead_block_reads(func: Function) -> Function:
    """An Spmd / Group body keeps only what it forwards: unused block-index reads go."""
    used = set(used_vars(func.body))

    class _M(IRMutator):
        def mutate_seq_stmts(self, seq):
            seq = self.mutate_children(seq)
            keep = [x for x in seq.stmts if not (isinstance(x, AssignStmt) and x.var not in used
                                                 and isinstance(x.value, Call) and not isinstance(x.value.op, GlobalVar)
                                                 and x.value.op.name in BLOCK_IDENTITY_OPS)]
            return seq if len(keep) == len(seq.stmts) else SeqStmts(keep, seq.span)

    return func.replace(body=_M().mutate(func.body))


def _outline_all(program: Program, outliner_type, scope_type) -> Program:
    taken = set(program.functions)
    out: list = []
    changed = False
    for f in program.functions.values():
        if not collect_statements(f.body, lambda n: isinstance(n, scope_type)):
            out.append(f)
            continue
        if f.func_type in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV):
            raise UnsupportedError(f"OutlineClusterScopes: kernel function {f.name} contains a "
                                   f"{'pl.cluster' if scope_type is ClusterScopeStmt else 'pl.spmd'} scope", f.span,
                                   hint="cluster / spmd scopes belong to the orchestration that launches kernels")
        o = outliner_type(f, taken, program.functions)
        parent = f.replace(body=o.mutate(f.body))
        out += [_drop_dead_block_reads(g) for g in o.new_functions]
        out.append(_drop_dead_block_reads(parent))
        changed = True
    return program.with_functions(out) if changed else program


def _run(program: Program) -> Program:
    # clusters first: an spmd inside a cluster stays inside the Group, a cluster inside an spmd is refused
    program = _outline_all(program, _ClusterOutliner, ClusterScopeStmt)
    return _outline_all(program, _SpmdOutliner, SpmdScopeStmt)


def outline_cluster_scopes() -> Pass:
    return Pass("OutlineClusterScopes", _run, PassProperties(required={IRProperty.SSAForm},
                                                             produced={IRProperty.ClusterOutlined}))
