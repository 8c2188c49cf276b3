"""SplitVectorKernel: the AIV half of a `pl.split(UP_DOWN / LEFT_RIGHT)` mixed kernel runs on both AIV lanes.

Requires: MixedKernelExpanded / Produces: VectorKernelSplit (attrs) / Invalidates: —
On a2a3 a mixed kernel without a split mode is dual-dispatched (ExpandMixedKernel stamps attrs
dual_aiv_dispatch; this pass lowers the marked AIVs): both AIV lanes run it, lane 1 only replays the pipe handshakes — its loads have valid extent 0, its
pops (simulator) are empty and its stores sit under `if lane == 0`.
A pl.split_aiv(NONE) kernel is dual-dispatched without that replay: its lanes are task-parallel.
Reference: pass doc 23 (compiler-and-runtime.md §2, dump 24), seed 004 "split code". A mixed
pl.split kernel arrives in lane code already (LowerAutoVectorSplit cut its vector tiles and turned
its boundary moves into shard / gather, split_aiv=True): its transfers only get the split code of
their full-width tile (1–4). What LowerAutoVectorSplit leaves whole — a pure vector kernel carrying
pl.split — is halved here, with the same rule (lane_halving.py): every Vec tile cut along the split
axis, GM loads and stores moved by `get_subblock_idx() * S` with the lane's valid extent
clamp(V - lane*S, 0, S) passed at run time.

    lane code:  AIV (split_aiv): z: Tile[[8, 16], Vec] = tpop_from_aic(split=1)   → code of the [16, 16] push
    pure AIV:   x: Tile[[16, 16], Vec] = load(a, [0, 0], ..);  out = store(x, [0, 0], out)
           →    lane = get_subblock_idx(); x: Tile[[8, 16], Vec] = load(a, [0 + lane * 8, 0], ..)
                out = store(x, [0 + lane * 8, 0], out)          (attrs split=UP_DOWN: two lanes)
"""

from __future__ import annotations

from pypto.ir.dtypes import INDEX
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import BinaryExpr, Call, GlobalVar, MakeTuple, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, IfStmt, SeqStmts, YieldStmt, flatten_to_stmts
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRMutator
from pypto.passes.expand_mixed_kernel.dual_dispatch import replay_valid_shapes
from pypto.passes.expand_mixed_kernel.split_code import AXIS, lane_stride, split_mode, transfer_code
from pypto.passes.lane_halving import LaneHalver, dim, full_of
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties


def _split_aiv(func: Function, mode) -> Function:
    lane = Var("aiv_lane", ScalarType(INDEX), func.span)
    halver = LaneHalver(func, mode, lane)
    body = halver.mutate(func.body)
    ident = AssignStmt(lane, create_op_call("tile.get_subblock_idx", [], {}, func.span), func.span)
    return func.replace(body=SeqStmts([ident, *flatten_to_stmts(body)], func.span))


class _CubeCodes(IRMutator):
    """The AIC side of a split pair: its pushes / pops carry the code of their full-width tile (at the
    partition stride a rebalanced boundary's push carries)."""

    def __init__(self, mode):
        self.mode = mode

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) or c.op.name not in ("tile.tpush_to_aiv", "tile.tpop_from_aiv"):
            return c
        full = c.args[0].type if c.op.name == "tile.tpush_to_aiv" else c.type
        gather = c.op.name == "tile.tpop_from_aiv"
        code = transfer_code(full, self.mode, gather=gather, span=c.span, stride=c.kwargs.get("lane_stride"))
        return c.replace(kwargs={**c.kwargs, "split": code})


class _ReplayLoads(IRMutator):
    """Dual dispatch: lane 1 loads nothing (valid rows × (1 - lane)) and its stores are masked
    (`if lane == 0: store`), so it only keeps the handshakes."""

    def __init__(self, lane: Var):
        self.lane = lane

    def _is_store(self, c) -> bool:
        return isinstance(c, Call) and not isinstance(c.op, GlobalVar) and c.op.name == "tile.store"

    def _lane0(self):
        return BinaryExpr("eq", self.lane, const(0, INDEX))

    def mutate_assign_stmt(self, s):
        if not self._is_store(s.value):
            return s.replace(value=self.mutate(s.value))
        written = Var(f"{s.var.name_hint}_lane0", s.var.type, s.span)
        then = SeqStmts([AssignStmt(written, self.mutate(s.value), s.span), YieldStmt([written], s.span)], s.span)
        other = SeqStmts([YieldStmt([s.value.args[2]], s.span)], s.span)
        return IfStmt(self._lane0(), then, other, [s.var], s.span)

    def mutate_eval_stmt(self, s):
        if not self._is_store(s.expr):
            return s.replace(expr=self.mutate(s.expr))
        return IfStmt(self._lane0(), SeqStmts([EvalStmt(self.mutate(s.expr), s.span)], s.span), None, [], s.span)

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) or c.op.name != "tile.load" or c.kwargs.get("target_memory") is not MemorySpace.Vec:
            return c
        keep = BinaryExpr("sub", const(1, INDEX), self.lane)
        rows, *rest = c.args[3].elements       # no rows is empty; a row prefix stays reshapeable (dual_dispatch.py)
        return c.replace(args=(*c.args[:3], MakeTuple([BinaryExpr("mul", rows, keep), *rest]), *c.args[4:]))


_LANE = "aiv_lane"


def _dual_dispatch(func: Function) -> Function:
    """a2a3, no split, marked dual_aiv_dispatch by ExpandMixedKernel: the AIV runs on both lanes;
    lane 1 replays the handshakes on empty tiles."""
    lane = Var(_LANE, ScalarType(INDEX), func.span)
    body = _ReplayLoads(lane).mutate(func.body)
    ident = AssignStmt(lane, create_op_call("tile.get_subblock_idx", [], {}, func.span), func.span)
    return replay_valid_shapes(func.replace(body=SeqStmts([ident, *flatten_to_stmts(body)], func.span)), lane)


def _replay_lowered(func: Function) -> bool:
    """Whether `func` already starts with the lane binding _dual_dispatch writes (idempotence)."""
    stmts = flatten_to_stmts(func.body)
    return bool(stmts) and isinstance(stmts[0], AssignStmt) and stmts[0].var.name_hint == _LANE \
        and isinstance(stmts[0].value, Call) and getattr(stmts[0].value.op, "name", "") == "tile.get_subblock_idx"


class _RegionCodes(IRMutator):
    """pl.split_aiv kernels: the lane tiles are the author's; the transfers only get their codes, from
    the full tile the pair moves. A pop takes the type of the AIC push it pairs with (`pushed`, in
    program order), so an odd extent (15 rows: lanes of 8 and 7) gets the odd code; without a
    partner the full tile is twice the lane tile (even halves)."""

    def __init__(self, mode, pushed: list):
        self.mode = mode
        self.axis = AXIS[mode]
        self.pushed = list(pushed)

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) or c.op.name not in ("tile.tpop_from_aic", "tile.tpush_to_aic"):
            return c
        lane = c.type if c.op.name == "tile.tpop_from_aic" else c.args[0].type
        full = full_of(lane, self.axis)
        if c.op.name == "tile.tpop_from_aic" and c.kwargs.get("id") is None and self.pushed:
            partner = self.pushed.pop(0)
            if dim(partner, self.axis) is not None and lane_stride(dim(partner, self.axis)) == dim(lane, self.axis):
                full = partner
        code = transfer_code(full, self.mode, gather=c.op.name == "tile.tpush_to_aic", span=c.span,
                             stride=c.kwargs.get("lane_stride"))
        return c.replace(kwargs={**c.kwargs, "split": code})


def _cube_pushes(program: Program, aiv: Function) -> list:
    """The tile types the AIC partner of `aiv` (the AIC called beside it in a Group) pushes to the AIV
    lanes, in program order (ExpandMixedKernel builds both sides from one body, in one order)."""
    from pypto.passes.analysis import calls_in
    for g in program.functions.values():
        if g.func_type is not FunctionType.Group:
            continue
        callees = [program.functions.get(c.op.name) for c in calls_in(g.body) if isinstance(c.op, GlobalVar)]
        if aiv not in callees:
            continue
        cubes = [f for f in callees if f is not None and f.func_type is FunctionType.AIC]
        if len(cubes) == 1:
            return [c.args[0].type for c in calls_in(cubes[0].body)
                    if not isinstance(c.op, GlobalVar) and c.op.name == "tile.tpush_to_aiv"
                    and c.kwargs.get("id") is None]
    return []


def _run(program: Program) -> Program:
    out, changed = [], False
    for f in program.functions.values():
        mode = split_mode(f.attrs)
        if mode is None and f.func_type is FunctionType.AIV and f.attrs.get("split_aiv") \
                and not f.attrs.get("dual_aiv_dispatch"):
            # pl.split_aiv(2, mode=NONE): task-parallel lanes both run the whole body (no replay, no masking)
            out.append(f.replace(attrs={**f.attrs, "dual_aiv_dispatch": True}))
            changed = True
            continue
        if mode is None and f.func_type is FunctionType.AIV and f.attrs.get("dual_aiv_dispatch") \
                and not f.attrs.get("split_aiv") and not _replay_lowered(f):
            out.append(_dual_dispatch(f))
            changed = True
            continue
        if mode is None or f.func_type not in (FunctionType.AIV, FunctionType.AIC):
            out.append(f)
            continue
        changed = True
        if f.func_type is FunctionType.AIV and f.attrs.get("split_aiv"):
            pushed = _cube_pushes(program, f)
            out.append(f.replace(body=_RegionCodes(mode, pushed).mutate(f.body)))   # lane code written by the author
        elif f.func_type is FunctionType.AIV:
            out.append(_split_aiv(f, mode))
        else:
            out.append(f.replace(body=_CubeCodes(mode).mutate(f.body)))
    return program.with_functions(out) if changed else program


def split_vector_kernel() -> Pass:
    return Pass("SplitVectorKernel", _run,
                PassProperties(required={IRProperty.SSAForm, IRProperty.MixedKernelExpanded}))
