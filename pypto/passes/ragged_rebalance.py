"""The partition stride of an AUTO pl.split kernel with one ragged cube → vector boundary (seed 004).

The lanes normally split the split axis at the physical half h = ceil(box / 2): lane L owns
[L*h, L*h + h). With a valid extent V short of the box that can leave lanes pto-isa cannot place
(13 of 16 rows: 8 and 5). When every split-axis vector tile of the kernel derives from one such
boundary, the valid region itself is split evenly instead: stride S = ceil(V / 2) gives lanes
ceil(V / 2) and floor(V / 2), which differ by at most one (13 → 7 and 6, code TILE_UP_DOWN_ODD).
The physical lane box stays h; only the partition moves, and the boundary carries `lane_stride=S`.

A vector → cube move of boundary data is a gather cut at the same stride (it carries lane_stride
too); a gather has no odd form, so an odd V with a gather keeps the box partition.
Declined (the box partition stays, and the transfer names the unplaceable extents): a gather of
data not derived from the boundary or whose lanes would differ, two boundaries of
different extents, a dynamic extent, a split-axis vector tile of independent origin (a load,
a Vec parameter, a constant fill — its lane part spans the whole lane box, so an op it leads
would write past the lane's stride into the other lane's rows), a reshape / transpose, or a branch
yielding a split-axis vector tile. A `tile.create` (a reduction's scratch) is neutral as long as
only ops that also read boundary data use it, not as their first operand (stored, gathered,
yielded or leading an op it declines).

    z: Tile[[16, 16], Acc, valid [13, 16]];  z_vec = move(z, Vec);  store(exp(z_vec), [0, 0], o)
    → stride 7: z_vec = aiv_shard(z, split=1, lane_stride=7);  store(.., [0 + lane * 7, 0], o)
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, GlobalVar
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, WhileStmt, YieldStmt
from pypto.ir.types import TileType
from pypto.ir.walks import statements
from pypto.passes.expand_mixed_kernel.affinity import C2V, V2C, boundary_direction
from pypto.passes.expand_mixed_kernel.split_code import lane_extents, lane_stride

_AXIS_MOVERS = ("tile.reshape", "tile.transpose", "tile.transpose_view")


class _Decline(Exception):
    pass


def _split_extent(t, axis: int) -> Optional[int]:
    """The split-axis box of a Vec tile the lanes would partition (None: not partitioned)."""
    if not isinstance(t, TileType) or t.memory_space is not MemorySpace.Vec or axis >= len(t.shape):
        return None
    n = t.shape[axis]
    if not isinstance(n, ConstInt):
        raise _Decline
    return n.value if n.value > 1 else None


class _Scan:
    def __init__(self, axis: int, keep_full: frozenset):
        self.axis = axis
        self.keep_full = keep_full
        self.gathers: list = []                    # the full tiles handed back to the cube
        self.boundary: Optional[tuple] = None      # (box, valid) on the split axis
        self.derived: set = set()                  # vars carrying boundary data
        self.placeless: set = set()                # tile.create scratch: no data of its own

    def _record(self, full: TileType, result) -> None:
        box, valid = full.shape[self.axis], full.valid_shape[self.axis]
        if not isinstance(box, ConstInt) or not isinstance(valid, ConstInt):
            raise _Decline
        if self.boundary is not None and self.boundary != (box.value, valid.value):
            raise _Decline
        self.boundary = (box.value, valid.value)
        self.derived.add(result)

    def call(self, c: Call, result) -> None:
        if isinstance(c.op, GlobalVar):
            raise _Decline
        if result is not None and result in self.keep_full:
            return                        # a constant fill the cube re-creates: never cut, never moved
        direction = boundary_direction(c)
        if c.op.name in ("tile.aic_gather", "tile.tpush_to_aic", "tile.tpop_from_aiv", "tile.tpop_from_aic"):
            raise _Decline
        if direction == V2C:
            if c.args[0] in self.keep_full:
                return
            if c.args[0] not in self.derived:
                raise _Decline
            self.gathers.append(c.args[0].type)
            return
        if direction == C2V:
            self._record(c.args[0].type, result)
            return
        if _split_extent(c.type, self.axis) is None:
            if any(a in self.placeless for a in c.args):
                raise _Decline            # scratch stored whole: its rows are not the boundary's
            return
        if c.op.name in _AXIS_MOVERS:
            raise _Decline
        if c.op.name == "tile.create" and result is not None:
            self.placeless.add(result)    # a reduction's scratch: no row has a value of its own
            return
        if c.args and c.args[0] in self.placeless:
            raise _Decline                # an op led by scratch takes the scratch's whole lane box as valid
        partitioned = [a for a in c.args if _split_extent(getattr(a, "type", None), self.axis) is not None
                       and a not in self.placeless]
        if not partitioned or any(a not in self.derived for a in partitioned):
            raise _Decline
        valid = c.type.valid_shape[self.axis]
        if not isinstance(valid, ConstInt):
            raise _Decline
        if result is not None:
            self.derived.add(result)

    def loop(self, s) -> None:
        for ia in s.iter_args:
            if _split_extent(ia.type, self.axis) is None:
                continue
            if ia.init_value not in self.derived:
                raise _Decline
            self.derived.add(ia)
        for rv, ia in zip(s.return_vars, s.iter_args):
            if ia in self.derived:
                self.derived.add(rv)


def resolve_lane_stride(func: Function, axis: int, keep_full: frozenset = frozenset()) -> Optional[int]:
    """The balanced stride ceil(V / 2) for `func`'s body, or None to keep the box partition.
    `keep_full`: the Vec constant fills LowerAutoVectorSplit hands to the cube whole."""
    scan = _Scan(axis, keep_full)
    try:
        if any(_split_extent(p.type, axis) is not None for p in func.params):
            raise _Decline
        for s in statements(func.body):
            if isinstance(s, AssignStmt) and isinstance(s.value, Call):
                scan.call(s.value, s.var)
            elif isinstance(s, AssignStmt) and _split_extent(s.var.type, axis) is not None:
                if s.value not in scan.derived:
                    raise _Decline
                scan.derived.add(s.var)
            elif isinstance(s, EvalStmt) and isinstance(s.expr, Call):
                scan.call(s.expr, None)
            elif isinstance(s, (ForStmt, WhileStmt)):
                scan.loop(s)
            elif isinstance(s, IfStmt) and any(_split_extent(rv.type, axis) is not None for rv in s.return_vars):
                raise _Decline
            elif isinstance(s, YieldStmt) and any(v in scan.placeless for v in s.values):
                raise _Decline
    except _Decline:
        return None
    if scan.boundary is None:
        return None
    box, valid = scan.boundary
    balanced = lane_stride(valid)
    if balanced <= 0 or valid >= box or balanced == lane_stride(box):
        return None
    if scan.gathers and not all(_gather_placeable(t, axis, balanced) for t in scan.gathers):
        return None
    return balanced


def _gather_placeable(full: TileType, axis: int, stride: int) -> bool:
    """A vector → cube gather has no odd form: its lanes must hold equal parts, or lane 1 none."""
    valid = full.valid_shape[axis]
    if not isinstance(valid, ConstInt):
        return False
    e0, e1 = lane_extents(valid.value, stride)
    return e0 == e1 or e1 == 0
