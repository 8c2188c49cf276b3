"""SplitVectorKernel: the AIV half of a `pl.split(UP_DOWN / LEFT_RIGHT)` mixed kernel runs on both AIV lanes.

Requires: MixedKernelExpanded / Produces: VectorKernelSplit (attrs) / Invalidates: —
On a2a3 a mixed kernel without a split mode is dual-dispatched (ExpandMixedKernel stamps attrs
dual_aiv_dispatch; this pass lowers the marked AIVs): both AIV lanes run it, lane 1 only replays the pipe handshakes — its loads have valid extent 0, its
pops (simulator) are empty and its stores sit under `if lane == 0`.
A pl.split_aiv(NONE) kernel is dual-dispatched without that replay: its lanes are task-parallel.
Reference: pass doc 23 (compiler-and-runtime.md §2, dump 24), seed 004 "split code". Here it
also does the vector-side halving that the reference performs earlier (LowerAutoVectorSplit,
row 21). It stays here on purpose: before ExpandMixedKernel the kernel is still mixed, so a
halver would have to decide per statement which tiles are the vector side's (tile.create /
tile.full are SHARED; an Acc accumulator must not be halved) — exactly the affinity analysis
ExpandMixedKernel owns; after it, the rule is simply "every Vec tile of the AIV function", and the
transfer codes need the full tile (AIC side) and the lane tile together, which exist side by side
only now. The result is the same lane code; only the dump after LowerAutoVectorSplit differs
from the reference's (whole tiles there, pinned by test_auto_split_placement.py).
Every Vec tile of the AIV function is cut along the split axis into the lane's part, GM loads
and stores move by `get_subblock_idx() * S` (S = the lane tile extent, the half rounded up),
the lane's valid extent clamp(V - lane*S, 0, S) is passed at run time, and every transfer of
the pair (both sides) carries the split code of its full-width tile (1–4). Ops that would
mix the lanes (a reduction or reshape across the split axis) are rejected.

    before:  AIV: z: Tile[[16, 16], Vec] = tpop_from_aic(split=0);  out = store(z, [0, 0], out)
    after:   AIV: lane = get_subblock_idx(); z: Tile[[8, 16], Vec] = tpop_from_aic(split=1)
                  out = store(z, [0 + lane * 8, 0], out)         (attrs split=UP_DOWN: two lanes)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, IterArg, MakeTuple, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, SeqStmts, WhileStmt, YieldStmt, flatten_to_stmts
from pypto.ir.types import ScalarType, TileType
from pypto.ir.visitor import IRMutator, substitute
from pypto.passes.expand_mixed_kernel.dual_dispatch import replay_valid_shapes
from pypto.passes.expand_mixed_kernel.split_code import AXIS, lane_stride, split_mode, transfer_code
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties


def _dim(t: TileType, axis: int):
    d = t.shape[axis]
    return d.value if isinstance(d, ConstInt) else None


def lane_type(t: TileType, axis: int) -> TileType:
    """The lane's part of a full Vec tile: the split-axis extent halved (rounded up)."""
    n = _dim(t, axis)
    if n is None or n <= 1:
        return t
    s = lane_stride(n)
    shape = list(t.shape)
    shape[axis] = ConstInt(s, INDEX)
    valid = list(t.valid_shape)
    v = valid[axis]
    valid[axis] = ConstInt(min(v.value, s), INDEX) if isinstance(v, ConstInt) else ConstInt(s, INDEX)
    return TileType(shape, t.dtype, None, t.tile_view, t.memory_space).with_valid_shape(valid)


class _Halver(IRMutator):
    """Rewrites one AIV body for its lane; `lane` is the Var bound to get_subblock_idx()."""

    def __init__(self, func: Function, mode, lane: Var):
        self.func = func
        self.mode = mode
        self.axis = AXIS[mode]
        self.lane = lane
        self.map: dict = {}

    def mutate_var(self, v):
        return self.map.get(v, v)

    def _offset(self, offsets, stride: int):
        items = list(offsets.elements if isinstance(offsets, MakeTuple) else offsets)
        items[self.axis] = BinaryExpr("add", items[self.axis], BinaryExpr("mul", self.lane, const(stride, INDEX)))
        return MakeTuple(items)

    def _lane_extent(self, valid, stride: int):
        """clamp(valid - lane*stride, 0, stride) as a scalar expression."""
        rest = BinaryExpr("sub", valid, BinaryExpr("mul", self.lane, const(stride, INDEX)))
        return BinaryExpr("min", BinaryExpr("max", rest, const(0, INDEX)), const(stride, INDEX))

    def _reject(self, c, why: str):
        raise UnsupportedError(f"pl.split({self.mode.name}): {c.op.name} {why}, so kernel {self.func.name} cannot "
                               f"be split across the two AIV lanes", c.span,
                               hint="use pl.SplitMode.NONE, split along the other axis, or take a column / row "
                                    "slice first")

    def _call(self, c: Call, full_type):
        name = c.op.name
        args = [self.mutate(a) for a in c.args]
        if name == "tile.tpop_from_aic":
            code = transfer_code(full_type, self.mode, span=c.span)
            return c.replace(kwargs={**c.kwargs, "split": code}, type=lane_type(full_type, self.axis))
        if name == "tile.tpush_to_aic":
            code = transfer_code(_full_of(c.args[0].type, self.axis), self.mode, gather=True, span=c.span)
            return c.replace(args=tuple(args), kwargs={**c.kwargs, "split": code})
        if (name == "tile.load" and len(c.args) > 4) or (name == "tile.store" and len(c.args) > 3):
            self._reject(c, "reads or writes a rank > 2 GM window as a flattened 2-D tile (FlattenTileNdTo2D); "
                            "halving that window per lane is not built")
        if name == "tile.load" and c.kwargs.get("target_memory") is MemorySpace.Vec:
            t = full_type
            n = _dim(t, self.axis)
            if n is None or n <= 1:
                return c.replace(args=tuple(args))
            s = lane_stride(n)
            shapes = list(args[2].elements)
            shapes[self.axis] = const(s, INDEX)
            valids = list(args[3].elements)
            valids[self.axis] = self._lane_extent(valids[self.axis], s) \
                if not (isinstance(valids[self.axis], ConstInt) and valids[self.axis].value == 2 * s) else const(s, INDEX)
            new_args = [args[0], self._offset(args[1], s), MakeTuple(shapes), MakeTuple(valids)]
            return c.replace(args=tuple(new_args), type=lane_type(t, self.axis))
        if name == "tile.store":
            src = c.args[0].type
            n = _dim(src, self.axis) if isinstance(src, TileType) else None
            if n is None or n <= 1 or src.memory_space is not MemorySpace.Vec:
                return c.replace(args=tuple(args))
            return c.replace(args=(args[0], self._offset(args[1], lane_stride(n)), args[2]))
        if name in ("tile.create", "tile.full"):
            t = full_type
            n = _dim(t, self.axis)
            if n is None or n <= 1:
                return c
            shape = list(args[0].elements)
            shape[self.axis] = const(lane_stride(n), INDEX)
            return c.replace(args=(MakeTuple(shape),), type=lane_type(t, self.axis))
        if not any(a is not b for a, b in zip(args, c.args)):
            return c
        try:
            new = create_op_call(name, args, c.kwargs, c.span, c.attrs or None)
        except Exception:
            self._reject(c, "cannot take the lane's part of its operands")
        split_in = [_dim(a.type, self.axis) for a in c.args if isinstance(a.type, TileType)]
        split_in = [n for n in split_in if n is not None and n > 1]
        if isinstance(full_type, TileType) and isinstance(new.type, TileType):
            n_full, n_new = _dim(full_type, self.axis), _dim(new.type, self.axis)
            expect = lane_stride(n_full) if n_full and n_full > 1 else n_full
            if n_new != expect or (split_in and n_full != max(split_in)):
                self._reject(c, "works across the split axis")
        return new

    def mutate_assign_stmt(self, s):
        if not isinstance(s.value, Call) or isinstance(s.value.op, GlobalVar):
            return s.replace(value=self.mutate(s.value))
        value = self._call(s.value, s.var.type)
        if value.type != s.var.type or value is not s.value:
            var = Var(s.var.name_hint, value.type, s.var.span) if value.type is not s.var.type else s.var
            if var is not s.var:
                self.map[s.var] = var
            return AssignStmt(var, value, s.span)
        return s

    def mutate_eval_stmt(self, s):
        if isinstance(s.expr, Call) and not isinstance(s.expr.op, GlobalVar):
            return s.replace(expr=self._call(s.expr, s.expr.type))
        return s.replace(expr=self.mutate(s.expr))

    def _loop_vars(self, s):
        new_iters = []
        for ia in s.iter_args:
            init = self.mutate(ia.init_value)
            t = init.type if isinstance(init.type, TileType) and isinstance(ia.type, TileType) else ia.type
            nia = IterArg(ia.name_hint, t, init, ia.span)
            self.map[ia] = nia
            new_iters.append(nia)
        return new_iters

    def _results(self, return_vars, types):
        out = []
        for rv, t in zip(return_vars, types):
            nrv = Var(rv.name_hint, t, rv.span) if t is not rv.type else rv
            self.map[rv] = nrv
            out.append(nrv)
        return out

    def mutate_for_stmt(self, s):
        iters = self._loop_vars(s)
        body = self.mutate(s.body)
        rvs = self._results(s.return_vars, [i.type for i in iters])
        return s.replace(iter_args=tuple(iters), body=body, return_vars=tuple(rvs),
                         start=self.mutate(s.start), stop=self.mutate(s.stop), step=self.mutate(s.step))

    def mutate_while_stmt(self, s):
        iters = self._loop_vars(s)
        cond, body = self.mutate(s.condition), self.mutate(s.body)
        rvs = self._results(s.return_vars, [i.type for i in iters])
        return s.replace(iter_args=tuple(iters), condition=cond, body=body, return_vars=tuple(rvs))

    def mutate_if_stmt(self, s):
        then_body = self.mutate(s.then_body)
        else_body = self.mutate(s.else_body) if s.else_body is not None else None
        last = flatten_to_stmts(then_body)[-1] if flatten_to_stmts(then_body) else None
        types = [v.type for v in getattr(last, "values", ())] or [rv.type for rv in s.return_vars]
        rvs = self._results(s.return_vars, types if len(types) == len(s.return_vars) else
                            [rv.type for rv in s.return_vars])
        return s.replace(condition=self.mutate(s.condition), then_body=then_body, else_body=else_body,
                         return_vars=tuple(rvs))


def _full_of(lane: TileType, axis: int) -> TileType:
    """The full-width tile two lane tiles of this type gather into (even halves)."""
    n = _dim(lane, axis)
    shape = list(lane.shape)
    shape[axis] = ConstInt(2 * n, INDEX)
    valid = list(lane.valid_shape)
    valid[axis] = ConstInt(2 * n, INDEX)
    return TileType(shape, lane.dtype, None, None, lane.memory_space).with_valid_shape(valid)


def _split_aiv(func: Function, mode) -> Function:
    lane = Var("aiv_lane", ScalarType(INDEX), func.span)
    halver = _Halver(func, mode, lane)
    body = halver.mutate(func.body)
    ident = AssignStmt(lane, create_op_call("tile.get_subblock_idx", [], {}, func.span), func.span)
    return func.replace(body=SeqStmts([ident, *flatten_to_stmts(body)], func.span))


class _CubeCodes(IRMutator):
    """The AIC side of a split pair: its pushes / pops carry the code of their full-width tile."""

    def __init__(self, mode):
        self.mode = mode

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) or c.op.name not in ("tile.tpush_to_aiv", "tile.tpop_from_aiv"):
            return c
        full = c.args[0].type if c.op.name == "tile.tpush_to_aiv" else c.type
        gather = c.op.name == "tile.tpop_from_aiv"
        return c.replace(kwargs={**c.kwargs, "split": transfer_code(full, self.mode, gather=gather, span=c.span)})


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
        full = _full_of(lane, self.axis)
        if c.op.name == "tile.tpop_from_aic" and c.kwargs.get("id") is None and self.pushed:
            partner = self.pushed.pop(0)
            if _dim(partner, self.axis) is not None and lane_stride(_dim(partner, self.axis)) == _dim(lane, self.axis):
                full = partner
        code = transfer_code(full, self.mode, gather=c.op.name == "tile.tpush_to_aic", span=c.span)
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
