"""GM-mediated cube → vector dependencies get a fence handshake (seed 004, "经 GM 中转的跨核依赖").

When the cube side stores a tile to a GM tensor that the vector side later loads, no tile.move
marks the dependency, so the split kernels would race on GM. A fence is planned when (1) the
cube side stores to that tensor exactly once, (2) the load sits in the same block as the store
(or inside a later statement of that block: the fence goes before that whole statement, so a
consumer loop gets one fence), (3) the store comes first. The AIC pushes the stored tile
after the store; the AIV pops it before the load and frees it at once (a token). Vector →
cube GM exchanges stay unfenced (they would need the V2C fractal adaptation).

    AIC: out = store(acc, .., out); tpush_to_aiv(acc)
    AIV: tok = tpop_from_aic(); tfree_to_aic(tok); x = load(out, ..)
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.ops.registry import CUBE, VECTOR
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, WhileStmt, child_bodies, flatten_to_stmts
from pypto.ir.types import TileType
from pypto.passes.expand_mixed_kernel.affinity import call_affinity, stmt_call




def _all_stmts(body) -> list:
    out = []
    for s in flatten_to_stmts(body):
        out.append(s)
        for ch in child_bodies(s):
            out += _all_stmts(ch)
    return out


def _roots(body) -> dict:
    """Tensor Var → the tensor it is a write-back of (store / in-place results chain to their target)."""
    chain = {}
    for s in _all_stmts(body):
        c = stmt_call(s)
        if isinstance(s, AssignStmt) and c is not None and not isinstance(c.op, GlobalVar) \
                and c.op.reuses_input is not None and not isinstance(s.var.type, TileType):
            chain[s.var] = c.args[c.op.reuses_input]

    def root(v):
        seen = 0
        while v in chain and seen < 256:
            v, seen = chain[v], seen + 1
        return v
    return {v: root(v) for v in chain} | {"_root": root}


def _cube_store(s):
    c = stmt_call(s)
    if c is None or isinstance(c.op, GlobalVar) or c.op.name != "tile.store" or call_affinity(c) != CUBE:
        return None
    return c


def _vector_loads(s) -> list:
    out = []
    for x in [s] + [y for ch in child_bodies(s) for y in _all_stmts(ch)]:
        c = stmt_call(x)
        if c is not None and not isinstance(c.op, GlobalVar) and c.op.name == "tile.load" \
                and call_affinity(c) == VECTOR:
            out.append(c)
    return out


def plan_fences(body) -> tuple:
    """(push_after: {id(store stmt): stored tile}, pop_before: {id(stmt): [token tile types]})."""
    roots = _roots(body)
    root = roots["_root"]
    store_count: dict = {}
    for s in _all_stmts(body):
        c = _cube_store(s)
        if c is not None:
            store_count[root(c.args[2])] = store_count.get(root(c.args[2]), 0) + 1
    push_after, pop_before = {}, {}

    def block(stmts):
        for i, s in enumerate(stmts):
            c = _cube_store(s)
            if c is not None and store_count.get(root(c.args[2])) == 1 and isinstance(c.args[0], Var):
                target = root(c.args[2])
                for later in stmts[i + 1:]:
                    if any(root(ld.args[0]) is target for ld in _vector_loads(later)):
                        push_after[id(s)] = c.args[0]
                        token = c.args[0].type.replace(memory_space=MemorySpace.Vec, memref=None)
                        pop_before.setdefault(id(later), []).append(token)
                        break
            for ch in child_bodies(s):
                block(flatten_to_stmts(ch))
    block(flatten_to_stmts(body))
    return push_after, pop_before
