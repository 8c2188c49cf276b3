"""MaterializeSemanticAliases: values that must be one buffer by their meaning share one MemRef.

Requires: HasMemRefs / Produces: — / Invalidates: —
Reference: pass doc 32 (compiler-and-runtime.md §2, dump 33; runs under every memory planner).
Must-alias pairs: an in-place op's result and the input it overwrites (OpDef.reuses_input:
matmul_acc, assemble, write, ...), and each loop carry — init value, iter arg, yielded value,
return var. InitMemRef already builds them this way; this pass re-establishes the invariant for
IR that reaches it otherwise (hand-written final IR, passes that rebuilt a loop), by moving the
later buffer onto the earlier one's base (the base keeps the larger size).

    before:  acc2: pl.Tile[..., pl.MemRef(mem_acc_1, 0, 4096)] = pl.tile.matmul_acc(acc, l, r)   # acc in mem_acc_0
    after:   acc2: pl.Tile[..., pl.MemRef(mem_acc_0, 0, 4096)] = pl.tile.matmul_acc(acc, l, r)
"""

from __future__ import annotations

from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, WhileStmt
from pypto.ir.types import MemRef, TileType
from pypto.ir.visitor import defined_vars
from pypto.ir.visitor import IRMutator, collect_statements
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.memory.init_mem_ref import apply_memrefs
from pypto.passes.memory.loop_carry_buffers import yielded
from pypto.passes.base import function_pass
from pypto.passes.memory.memory_reuse import is_alloc
from pypto.passes.properties import IRProperty, PassProperties


def _base(v):
    t = getattr(v, "type", None)
    return t.memref.base if isinstance(t, TileType) and t.memref is not None else None


def must_alias_pairs(func: Function) -> list:
    """(a, b) tile Vars that must share a buffer, in program order."""
    pairs: list = []
    for s in collect_statements(func.body, lambda n: isinstance(n, AssignStmt)):
        v = s.value
        if isinstance(v, Call) and not isinstance(v.op, GlobalVar) and v.op.reuses_input is not None:
            i = v.op.reuses_input
            if i < len(v.args) and isinstance(v.args[i], Var):
                pairs.append((v.args[i], s.var))
    for loop in collect_statements(func.body, lambda n: isinstance(n, (ForStmt, WhileStmt))):
        values = yielded(loop.body)
        for k, ia in enumerate(loop.iter_args):
            pairs.append((ia.init_value, ia))
            if k < len(values):
                pairs.append((ia, values[k]))
            if k < len(loop.return_vars):
                pairs.append((ia, loop.return_vars[k]))
    return [(a, b) for a, b in pairs if _base(a) is not None and _base(b) is not None]


def _run(func: Function, program: Program) -> Function:
    parent: dict = {}

    def find(b):
        while parent.get(b, b) is not b:
            b = parent[b]
        return b

    for a, b in must_alias_pairs(func):
        ra, rb = find(_base(a)), find(_base(b))
        if ra is not rb and a.type.memory_space == b.type.memory_space:
            parent[rb] = ra
    if not parent:
        return func
    memref = {}
    for v in [*func.params, *defined_vars(func.body)]:
        b = _base(v)
        if b is not None and find(b) is not b:
            memref[v] = MemRef(find(b), v.type.memref.byte_offset, v.type.memref.size)
    body = apply_memrefs(func.body, memref)
    sizes: dict = {}
    for s in collect_statements(body, is_alloc):
        root = find(s.var)
        sizes[root] = max(sizes.get(root, 0), s.value.kwargs["size"])

    class _Resize(IRMutator):
        def mutate_assign_stmt(self, s):
            if is_alloc(s) and s.var in sizes and sizes[s.var] != s.value.kwargs["size"]:
                kwargs = dict(s.value.kwargs, size=sizes[s.var])
                return s.replace(value=create_op_call("tile.alloc", [], kwargs, s.value.span))
            return self.mutate_children(s)

    kept = [s for s in body_list(_Resize().mutate(body)) if not (is_alloc(s) and find(s.var) is not s.var)]
    return func.replace(body=as_seq(kept, func.body.span))


def materialize_semantic_aliases():
    return function_pass("MaterializeSemanticAliases", _run, PassProperties(required={IRProperty.HasMemRefs}))
