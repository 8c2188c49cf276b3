"""FIXPIPE cast folding (part of AutoTileMatmulL0, pass doc 15): the cube drains an FP32 Acc tile
through FIXPIPE, which can narrow it to FP16 / BF16 on the way out (round-half-to-even, i.e.
`CastMode.rint`). A `tile.cast` of an Acc result that only feeds such a writeback is folded into it,
so the narrowing never becomes a vector op (a cube → vector → cube round trip):

  - the cast's one reader is `tile.move(c, target_memory=Mat)` → an FP16 / BF16 Mat scratch the
    Acc tile is assembled into (the Acc → Mat writeback converts);
  - the cast's one reader is `tile.store(c, offsets, out)` → the Acc tile is stored itself
    (the Acc → GM writeback converts).

Other round modes (the default `round` is half-away-from-zero), integer accumulators and other
readers keep the vector cast. AutoTileMatmulL0 then tiles an oversized producer block by block into
the same scratch / store.

    before:  c = pl.tile.cast(t, target_type=pl.BF16, mode=pl.CastMode.rint); x = pl.tile.move(c, target_memory=pl.Mem.Mat)
    after:   x_scratch = pl.tile.create([M, N], dtype=pl.BF16, target_memory=pl.Mem.Mat)
             x = pl.tile.assemble(x_scratch, t, [0, 0])
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.dtypes import BF16, FP16, FP32
from pypto.ir.enums import CastMode, MemorySpace
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt
from pypto.ir.types import TileType
from pypto.passes.analysis import as_seq, body_list, used_vars


def _op(value) -> Optional[str]:
    return value.op.name if isinstance(value, Call) and not isinstance(value.op, GlobalVar) else None


def foldable_cast(value) -> Optional[Var]:
    """The Acc tile a `tile.cast` narrows the way FIXPIPE does (FP32 → FP16 / BF16, rint), or None."""
    if _op(value) != "tile.cast" or value.kwargs.get("mode") is not CastMode.rint:
        return None
    src = value.args[0]
    if not (isinstance(src, Var) and isinstance(src.type, TileType) and src.type.memory_space is MemorySpace.Acc
            and src.type.dtype is FP32 and value.kwargs.get("target_type") in (FP16, BF16)):
        return None
    return src if src.type.rank == 2 and src.type.static_shape() is not None else None


def _leaf_statements(stmts: list) -> list:
    out: list = []
    for s in stmts:
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            out.append(s.replace(body=as_seq([], s.body.span)))
            out += _leaf_statements(body_list(s.body))
        elif isinstance(s, IfStmt):
            out.append(s.replace(then_body=as_seq([], None), else_body=None))
            out += _leaf_statements(body_list(s.then_body))
            if s.else_body is not None:
                out += _leaf_statements(body_list(s.else_body))
        else:
            out.append(s)
    return out


class _Folder:
    def __init__(self, func: Function):
        leaves = _leaf_statements(body_list(func.body))
        self.readers: dict = {}
        for s in leaves:
            for v in used_vars(s):
                self.readers.setdefault(v, []).append(s)
        self.changed = False

    def stmts(self, stmts: list) -> list:
        casts = {s.var: s for s in stmts if isinstance(s, AssignStmt) and foldable_cast(s.value) is not None}
        folded: set = set()
        out: list = []
        for s in stmts:
            new = self.fold_reader(s, casts, folded) if isinstance(s, (AssignStmt, EvalStmt)) else None
            if new is not None:
                out += new
                continue
            if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
                s = s.replace(body=as_seq(self.stmts(body_list(s.body)), s.body.span))
            elif isinstance(s, IfStmt):
                s = s.replace(then_body=as_seq(self.stmts(body_list(s.then_body)), s.then_body.span),
                              else_body=as_seq(self.stmts(body_list(s.else_body)), s.else_body.span)
                              if s.else_body is not None else None)
            out.append(s)
        if folded:
            self.changed = True
            out = [s for s in out if not (isinstance(s, AssignStmt) and s.var in folded)]
        return out

    def fold_reader(self, s, casts: dict, folded: set) -> Optional[list]:
        """The statements replacing `s` when it is the one reader of a foldable cast in this list."""
        value = s.value if isinstance(s, AssignStmt) else s.expr
        name = _op(value)
        if name not in ("tile.move", "tile.store") or not value.args or value.args[0] not in casts:
            return None
        c = value.args[0]
        if len(self.readers.get(c, [])) != 1:
            return None
        src = foldable_cast(casts[c].value)
        span = s.span
        if name == "tile.store":
            new = create_op_call("tile.store", [src, *value.args[1:]], dict(value.kwargs), span)
            folded.add(c)
            return [s.replace(value=new) if isinstance(s, AssignStmt) else s.replace(expr=new)]
        if value.kwargs.get("target_memory") is not MemorySpace.Mat or not isinstance(s, AssignStmt):
            return None
        create = create_op_call("tile.create", [list(s.var.type.shape)], {"dtype": s.var.type.dtype,
                                                                           "target_memory": MemorySpace.Mat}, span)
        create = create.replace(type=s.var.type)
        scratch = Var(f"{s.var.name_hint}_scratch", s.var.type, span)
        assemble = create_op_call("tile.assemble", [scratch, src, [0, 0]], {}, span).replace(type=s.var.type)
        folded.add(c)
        return [AssignStmt(scratch, create, span), s.replace(value=assemble)]


def fold_fixpipe_casts(func: Function) -> Function:
    """`func` with every foldable Acc cast folded into its Mat writeback or GM store."""
    folder = _Folder(func)
    body = folder.stmts(body_list(func.body))
    return func.replace(body=as_seq(body, func.body.span)) if folder.changed else func
