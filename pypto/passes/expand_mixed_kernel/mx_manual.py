"""AdaptManualVtoCPush for MX scales on a5 (seed 004, "手写 pipe 同样获得该适配", MX part).

A hand-written `tpush_to_aic` of an FP8E8M0 scale must not get the NZ insert ordinary data gets:
the scale crosses as a row/row box, planned from the contract of the tpop that consumes it. The
pairing is resolved, never guessed: the AIV's `import_peer_buffer(peer_func=...)` names the AIC,
pushes and pops of one pipe id pair up in order, and a missing peer, an ambiguous initializer, a
push / pop count or split mismatch, or a carrier larger than the slot is an error.

  consumer pops row/row [R, C]:  push a row/row tile (a Vec → Vec move first if it is not one)
  consumer pops col/col [G, N]:  push the row/row carrier transpose_view(col/col tile) [N, G];
                                 the AIC pops that carrier and views it back as the [G, N] col/col
                                 tile it declared (its tfree frees the carrier)

    before:  AIV  pl.tile.tpush_to_aic(sb, split=0)                 AIC  sb_m: [2, 32] col/col = tpop_from_aiv()
    after:   AIV  sb_carrier = transpose_view(sb); tpush_to_aic(sb_carrier)
             AIC  sb_m_carrier: [32, 2] row/row = tpop_from_aiv(); sb_m = transpose_view(sb_m_carrier)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import FP8E8M0
from pypto.ir.enums import FunctionType, MemorySpace, TileLayout
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, SeqStmts
from pypto.ir.types import TileType, TileView
from pypto.ir.visitor import SplicingMutator
from pypto.passes.analysis import calls_in

_COL = (TileLayout.col_major, TileLayout.col_major)
_ROW = (TileLayout.row_major, TileLayout.row_major)


def _layout(t: TileType) -> tuple:
    v = t.tile_view or TileView()
    return v.blayout, v.slayout


def _ops(func: Function, name: str, pipe_id=None) -> list:
    return [c for c in calls_in(func.body) if not isinstance(c.op, GlobalVar) and c.op.name == name
            and (pipe_id is None or (c.kwargs.get("id") or 0) == pipe_id)]


def _fail(aiv: Function, span, what: str, hint: str):
    raise UnsupportedError(f"ExpandMixedKernel (AdaptManualVtoCPush): hand-written MX scale push in {aiv.name}: "
                           f"{what}", span, hint=hint)


def _nbytes(t: TileType) -> int:
    n = 1
    for d in t.shape:
        n *= d.value
    return n * t.dtype.bits // 8


def is_mx_push(c: Call) -> bool:
    return c.args and isinstance(c.args[0].type, TileType) and c.args[0].type.dtype is FP8E8M0


def _pairs(aiv: Function, funcs: dict, mx_push: Call) -> tuple:
    """(AIC peer, [(push, pop)] of the MX push's pipe id, slot_size) — or an error naming what is wrong."""
    imports = [c.kwargs.get("peer_func") for c in _ops(aiv, "system.import_peer_buffer")]
    peer = funcs.get(imports[0]) if len(set(imports)) == 1 else None
    if peer is None or peer.func_type is not FunctionType.AIC:
        _fail(aiv, mx_push.span, f"its cube peer {imports[0] if imports else '(none)'} is not an AIC function of the "
                                 "program", "name the consuming AIC with pl.system.import_peer_buffer(peer_func=...)")
    pipe_id = mx_push.kwargs.get("id") or 0
    inits = _ops(aiv, "system.aiv_initialize_pipe", pipe_id)
    if len(inits) != 1:
        _fail(aiv, mx_push.span, f"pipe {pipe_id} has {len(inits)} aiv_initialize_pipe calls, not one",
              "initialize each pipe id once")
    pushes, pops = _ops(aiv, "tile.tpush_to_aic", pipe_id), _ops(peer, "tile.tpop_from_aiv", pipe_id)
    if len(pushes) != len(pops):
        _fail(aiv, mx_push.span, f"pipe {pipe_id} has {len(pushes)} pushes here but {len(pops)} pops in "
                                 f"{peer.name}", "pair every tpush_to_aic with one tpop_from_aiv, in order")
    for push, pop in zip(pushes, pops):
        if push.kwargs.get("split", 0) != pop.kwargs.get("split", 0):
            _fail(aiv, push.span, f"split {push.kwargs.get('split', 0)} is popped with split "
                                  f"{pop.kwargs.get('split', 0)} in {peer.name}", "use one split code per pair")
    return peer, list(zip(pushes, pops)), inits[0].kwargs["slot_size"]


class _PushRewrite(SplicingMutator):
    """AIV: each planned MX push becomes [layout move] [transpose_view] push(carrier)."""

    def __init__(self, plans: dict):
        self.plans = plans             # id(push call) → consumer pop type

    def mutate_eval_stmt(self, s):
        c = s.expr
        if not isinstance(c, Call) or id(c) not in self.plans:
            return s
        want, src, out = self.plans[id(c)], c.args[0], []
        target = _COL if _layout(want) == _COL else _ROW
        if _layout(src.type) != target:
            move = create_op_call("tile.move", [src], {"target_memory": MemorySpace.Vec, "blayout": target[0],
                                                       "slayout": target[1]}, c.span)
            src = Var(f"{src.name_hint}_{'col' if target == _COL else 'row'}", move.type, c.span)
            out.append(AssignStmt(src, move, s.span))
        if target == _COL:
            view = create_op_call("tile.transpose_view", [src], {}, c.span)
            src = Var(f"{src.name_hint}_carrier", view.type, c.span)
            out.append(AssignStmt(src, view, s.span))
        if not out:
            return s
        return SeqStmts(out + [EvalStmt(c.replace(args=(src, *c.args[1:])), s.span)], s.span)


class _PopRewrite(SplicingMutator):
    """AIC: a col/col MX pop takes the row/row carrier and views it back; its tfree frees the carrier."""

    def __init__(self, pops: set):
        self.pops = pops               # id(pop call) of col/col MX pops
        self.carriers: dict = {}       # the user's popped Var → the carrier Var

    def mutate_assign_stmt(self, s):
        if not isinstance(s.value, Call) or id(s.value) not in self.pops:
            return s
        box = create_op_call("tile.transpose_view", [s.var], {}, s.span).type
        carrier = Var(f"{s.var.name_hint}_carrier", box, s.span)
        self.carriers[s.var] = carrier
        pop = AssignStmt(carrier, s.value.replace(type=box), s.span)
        view = create_op_call("tile.transpose_view", [carrier], {}, s.span).replace(type=s.var.type)
        return SeqStmts([pop, AssignStmt(s.var, view, s.span)], s.span)

    def mutate_eval_stmt(self, s):
        c = s.expr
        if isinstance(c, Call) and not isinstance(c.op, GlobalVar) and c.op.name == "system.tfree_to_aiv" \
                and c.args and c.args[0] in self.carriers:
            return s.replace(expr=c.replace(args=(self.carriers[c.args[0]], *c.args[1:])))
        return s


def _rewrite(func: Function, mutator: SplicingMutator) -> Function:
    body = mutator.mutate(func.body)
    return func if body is func.body else func.replace(body=body)


def adapt_mx_pushes(funcs: dict, aiv: Function) -> dict:
    """Plans and rewrites the hand-written MX scale pushes of `aiv` (and their pops in its AIC peer)."""
    mx = [c for c in _ops(aiv, "tile.tpush_to_aic") if is_mx_push(c)]
    if not mx:
        return {}
    plans, col_pops, peer = {}, set(), None
    for push in mx:
        peer, pairs, slot = _pairs(aiv, funcs, push)
        pop = next(p for q, p in pairs if q is push)
        want = pop.type
        if not isinstance(want, TileType) or want.dtype is not FP8E8M0:
            _fail(aiv, push.span, f"it is popped in {peer.name} as {want}, not as an FP8E8M0 scale",
                  "pop the scale with its own FP8E8M0 tile type")
        if _nbytes(want) > slot:
            _fail(aiv, push.span, f"its {_nbytes(want)}-byte carrier does not fit the {slot}-byte slot",
                  f"raise slot_size to at least {_nbytes(want)}")
        plans[id(push)] = want
        if _layout(want) == _COL:
            col_pops.add(id(pop))
    out = {aiv.name: _rewrite(aiv, _PushRewrite(plans))}
    if col_pops:
        out[peer.name] = _rewrite(peer, _PopRewrite(col_pops))
    return out

