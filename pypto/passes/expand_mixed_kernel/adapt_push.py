"""AdaptManualVtoCPush (seed 004, "手写 pipe 同样获得该适配"): hand-written V→C pushes get the fractal view.

The boundary path adapts the pushes this pass builds; a fully hand-written pipe
(`pl.tile.tpush_to_aic` in an AIV function) never meets it. On a5 the cube reads its FIFO as
NZ fractal data, so a bare ND tile would land scrambled: the push is rewritten to push an NZ
Vec copy (col_major / row_major) made by a `tile.move` just before it. The push keeps its
kwargs (split, id) and attrs; a push already in the NZ view is left alone (idempotent). An FP8E8M0
MX scale push is planned from its consumer's pop instead (mx_manual.py).

    before:  pl.tile.tpush_to_aic(x, split=0, id=1)
    after:   x_nz = pl.tile.move(x, target_memory=Vec, blayout=col_major, slayout=row_major)
             pl.tile.tpush_to_aic(x_nz, split=0, id=1)
"""

from __future__ import annotations

from pypto.ir.enums import FunctionType, MemorySpace, TileLayout
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, EvalStmt, SeqStmts
from pypto.ir.types import TileType, TileView
from pypto.ir.visitor import IRMutator
from pypto.passes.expand_mixed_kernel.construct import NZ, op_call
from pypto.passes.expand_mixed_kernel.mx_manual import is_mx_push


def _is_nz(t: TileType) -> bool:
    v = t.tile_view
    return v is not None and (v.blayout, v.slayout) == NZ


class _Adapt(IRMutator):
    def mutate_eval_stmt(self, s):
        c = s.expr
        if not (isinstance(c, Call) and not isinstance(c.op, GlobalVar) and c.op.name == "tile.tpush_to_aic"):
            return s
        src = c.args[0]
        if not isinstance(src.type, TileType) or _is_nz(src.type) or is_mx_push(c):   # MX scales: mx_manual.py
            return s
        nz_type = src.type.replace(tile_view=(src.type.tile_view or TileView()).replace(blayout=NZ[0], slayout=NZ[1]),
                                   memref=None)
        nz = Var(f"{getattr(src, 'name_hint', 'pushed')}_nz", nz_type, c.span)
        move = op_call("tile.move", [src], {"target_memory": MemorySpace.Vec, "blayout": TileLayout.col_major,
                                            "slayout": TileLayout.row_major}, c.span, nz_type)
        return SeqStmts([AssignStmt(nz, move, s.span), EvalStmt(c.replace(args=(nz, *c.args[1:])), s.span)], s.span)

    def mutate_seq_stmts(self, s):
        out = []
        for x in s.stmts:
            nx = self.mutate(x)
            out.extend(nx.stmts if isinstance(nx, SeqStmts) and isinstance(x, EvalStmt) else [nx])
        return s.replace(stmts=tuple(out)) if len(out) != len(s.stmts) or any(a is not b for a, b in
                                                                              zip(out, s.stmts)) else s


def adapt_manual_pushes(func: Function, platform_name: str) -> Function:
    """a5 only: every hand-written tpush_to_aic of an AIV function pushes an NZ tile."""
    if platform_name != "a5" or func.func_type is not FunctionType.AIV:
        return func
    body = _Adapt().mutate(func.body)
    return func if body is func.body else func.replace(body=body)
