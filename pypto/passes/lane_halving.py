"""The lane's part of a split vector region: every Vec tile cut along the split axis (pl.split AUTO).

Shared by LowerAutoVectorSplit (a mixed kernel, before ExpandMixedKernel: its C→V / V→C boundary
moves become `tile.aiv_shard` / `tile.aic_gather`, seed 004) and SplitVectorKernel (a pure
vector kernel carrying pl.split, which LowerAutoVectorSplit leaves whole). The rule is the same
for both: a tile in Vec is the lane's; GM loads and stores move by `lane * S` (S = the lane
extent, the half rounded up) with the lane's valid extent clamp(V - lane*S, 0, S); cube tiles
and scalars are untouched. Ops that would mix the lanes (a reduction or reshape across the
split axis) are rejected.

    before:  x: Tile[[16, 32], Vec] = load(a, [0, 0], [16, 32], [16, 32]);  out = store(x, [0, 0], out)
    after:   x: Tile[[8, 32], Vec] = load(a, [0 + lane * 8, 0], [8, 32], [8, 32]);  out = store(x, [0 + lane * 8, 0], out)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import MemorySpace
from pypto.ir.equality import structural_equal
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, IterArg, MakeTuple, Var, const
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts, flatten_to_stmts
from pypto.ir.types import TileType
from pypto.ir.visitor import SplicingMutator
from pypto.passes.expand_mixed_kernel.affinity import C2V, V2C, boundary_direction
from pypto.passes.expand_mixed_kernel.split_code import AXIS, lane_stride, transfer_code


def dim(t: TileType, axis: int):
    d = t.shape[axis]
    return d.value if isinstance(d, ConstInt) else None


def lane_type(t: TileType, axis: int) -> TileType:
    """The lane's part of a full Vec tile: the split-axis extent halved (rounded up)."""
    n = dim(t, axis)
    if n is None or n <= 1:
        return t
    s = lane_stride(n)
    shape = list(t.shape)
    shape[axis] = ConstInt(s, INDEX)
    valid = list(t.valid_shape)
    v = valid[axis]
    valid[axis] = ConstInt(min(v.value, s), INDEX) if isinstance(v, ConstInt) else ConstInt(s, INDEX)
    lane = TileType(shape, t.dtype, None, t.tile_view, t.memory_space)
    if t.tile_view is None and structural_equal(tuple(valid), tuple(shape)):
        return lane                               # no view of its own: the whole lane tile is valid
    return lane.with_valid_shape(valid)


def _boundary_type(created: TileType, full: TileType, valid) -> TileType:
    """The type of a synthesized shard / gather: the one its op's Create deduces, so the AUTO path and
    the explicit pl.aiv_shard / pl.aic_gather path agree (seed 003). Only a ragged full tile (a valid
    extent short of its box) adds `valid` (the lane's for a shard, the full tile's for a gather)."""
    if structural_equal(tuple(full.valid_shape), tuple(full.shape)):
        return created
    return created.with_valid_shape(valid)


class LaneHalver(SplicingMutator):
    """Rewrites a vector region for its lane; `lane` is the Var bound to get_subblock_idx().

    `boundaries`: the body is a whole mixed kernel (LowerAutoVectorSplit); its C→V moves become
    `tile.aiv_shard` and its V→C moves `tile.aic_gather`, except a move of a Vec constant fill in
    `keep_full` (the cube side re-creates that fill; it carries no data).
    `stride`: the balanced partition of a ragged boundary (ragged_rebalance.py) — lane L owns
    [L*stride, L*stride + stride) of the split axis in a lane box that stays the physical half; None
    partitions at the physical half."""

    def __init__(self, func: Function, mode, lane: Var, boundaries: bool = False, keep_full=frozenset(),
                 stride=None):
        self.func = func
        self.mode = mode
        self.axis = AXIS[mode]
        self.lane = lane
        self.map: dict = {}
        self.boundaries = boundaries
        self.keep_full = keep_full
        self.stride = stride

    def _step(self, n: int) -> int:
        """How far apart the lanes' parts of an n-cell split axis sit."""
        return self.stride if self.stride is not None else lane_stride(n)

    def _lane_type(self, t: TileType) -> TileType:
        """lane_type, with a rebalanced lane's valid extent clamp(V - lane*S, 0, S) as an expression."""
        lane = lane_type(t, self.axis)
        v = t.valid_shape[self.axis] if isinstance(t, TileType) else None
        if self.stride is None or lane is t or not isinstance(v, ConstInt):
            return lane
        valid = list(lane.valid_shape)
        valid[self.axis] = self._lane_extent(v, self.stride)
        return lane.with_valid_shape(valid)

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
            code = transfer_code(full_of(c.args[0].type, self.axis), self.mode, gather=True, span=c.span)
            return c.replace(args=tuple(args), kwargs={**c.kwargs, "split": code})
        if (name == "tile.load" and len(c.args) > 4) or (name == "tile.store" and len(c.args) > 3):
            self._reject(c, "reads or writes a rank > 2 GM window as a flattened 2-D tile (FlattenTileNdTo2D); "
                            "halving that window per lane is not built")
        if name == "tile.load" and c.kwargs.get("target_memory") is MemorySpace.Vec:
            t = full_type
            n = dim(t, self.axis)
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
            n = dim(src, self.axis) if isinstance(src, TileType) else None
            if n is None or n <= 1 or src.memory_space is not MemorySpace.Vec:
                return c.replace(args=tuple(args))
            return c.replace(args=(args[0], self._offset(args[1], self._step(n)), args[2]))
        if name in ("tile.create", "tile.full"):
            t = full_type
            n = dim(t, self.axis)
            if n is None or n <= 1 or t.memory_space is not MemorySpace.Vec:    # an Acc accumulator stays whole
                return c
            shape = list(args[0].elements)
            shape[self.axis] = const(lane_stride(n), INDEX)
            return c.replace(args=(MakeTuple(shape),), type=lane_type(t, self.axis))
        if not any(a is not b for a, b in zip(args, c.args)):
            return c
        if all(a is b or structural_equal(a.type, b.type) for a, b in zip(args, c.args)):
            return c.replace(args=tuple(args))       # operands renamed (a loop's carry), none cut
        try:
            new = create_op_call(name, args, c.kwargs, c.span, c.attrs or None)
        except Exception:
            self._reject(c, "cannot take the lane's part of its operands")
        split_in = [dim(a.type, self.axis) for a in c.args if isinstance(a.type, TileType)]
        split_in = [n for n in split_in if n is not None and n > 1]
        if isinstance(full_type, TileType) and isinstance(new.type, TileType):
            n_full, n_new = dim(full_type, self.axis), dim(new.type, self.axis)
            expect = lane_stride(n_full) if n_full and n_full > 1 else n_full
            if full_type.memory_space is not MemorySpace.Vec:
                expect = n_full                      # a cube tile of a mixed kernel stays whole
            if n_new != expect or (split_in and n_full != max(split_in)):
                self._reject(c, "works across the split axis")
            if full_type.memory_space is MemorySpace.Vec and n_full and n_full > 1:
                return new.replace(type=self._lane_type(full_type))   # the tile keeps its own view
        return new

    def _rebind(self, var: Var, t) -> Var:
        if structural_equal(t, var.type):
            return var
        new = Var(var.name_hint, t, var.span)
        self.map[var] = new
        return new

    def _boundary_kwargs(self) -> dict:
        """A shard's / gather's mode, and the balanced partition it was cut at (if any)."""
        kwargs = {"split": self.axis + 1}
        if self.stride is not None:
            kwargs["lane_stride"] = self.stride
        return kwargs

    def _shard(self, s):
        """C→V: the lane pops its part of the cube tile (seed 004: a boundary move under pl.split)."""
        full, c = s.var.type, s.value
        shard = create_op_call("tile.aiv_shard", [self.mutate(c.args[0])], self._boundary_kwargs(), c.span)
        t = _boundary_type(shard.type, full, self._lane_type(full).valid_shape)
        return AssignStmt(self._rebind(s.var, t), shard.replace(type=t), s.span)

    def _gather(self, s):
        """V→C: the lanes push their parts, the cube pops the whole into Mat; a Left / Right / Acc
        target is then a cube-side move from that Mat tile."""
        c, full = s.value, s.var.type
        part = self.mutate(c.args[0])
        if dim(part.type, self.axis) == dim(c.args[0].type, self.axis) or part is c.args[0]:
            self._reject(c, f"moves a {c.args[0].type.memory_space.name} tile that is not cut per lane "
                            f"({'rows' if self.axis == 0 else 'columns'}: "
                            f"{dim(c.args[0].type, self.axis)}) to the cube")
        transfer_code(full, self.mode, gather=True, span=c.span, stride=self.stride)   # unjoinable lanes: its message
        gather = create_op_call("tile.aic_gather", [part], self._boundary_kwargs(), c.span)
        if dim(gather.type, self.axis) != dim(full, self.axis):
            self._reject(c, f"rejoins two lane parts of {dim(part.type, self.axis)} into "
                            f"{dim(gather.type, self.axis)}, not the {dim(full, self.axis)} the cube expects")
        target = c.kwargs.get("target_memory")
        t = _boundary_type(gather.type, full, full.valid_shape)
        if target is MemorySpace.Mat:
            return AssignStmt(self._rebind(s.var, t), gather.replace(type=t), s.span)
        joined = Var(f"{s.var.name_hint}_mat", t, s.span)
        view = full.effective_view
        move = create_op_call("tile.move", [joined], {"target_memory": target, "blayout": view.blayout,
                                                      "slayout": view.slayout}, c.span)
        return SeqStmts([AssignStmt(joined, gather.replace(type=t), s.span),
                         AssignStmt(s.var, move.replace(type=full), s.span)], s.span)

    def mutate_assign_stmt(self, s):
        if not isinstance(s.value, Call) or isinstance(s.value.op, GlobalVar):
            return s.replace(value=self.mutate(s.value))
        if self.boundaries and s.var in self.keep_full:
            return s
        direction = boundary_direction(s.value) if self.boundaries and s.value.op.name == "tile.move" else None
        if direction == C2V:
            return self._shard(s)
        if direction == V2C and s.value.args[0] not in self.keep_full:
            return self._gather(s)
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


def full_of(lane: TileType, axis: int) -> TileType:
    """The full-width tile two lane tiles of this type gather into (even halves)."""
    n = dim(lane, axis)
    shape = list(lane.shape)
    shape[axis] = ConstInt(2 * n, INDEX)
    valid = list(lane.valid_shape)
    valid[axis] = ConstInt(2 * n, INDEX)
    return TileType(shape, lane.dtype, None, None, lane.memory_space).with_valid_shape(valid)
