"""LowerAutoVectorSplit: a kernel's vector code becomes lane code — explicit `pl.split_aiv` regions
and the AUTO `pl.split(M)` form alike.

Requires: SSAForm, TileMemoryInferred / Produces: AivSplitLoweredValid (attrs) / Invalidates: —
Reference: pass doc 20 (compiler-and-runtime.md §2, dump 21), seed 004. Both forms leave the same
IR (seed 003: the explicit path's tile.aiv_shard / tile.aic_gather are built by the same Create):
a kernel with attrs split=M, split_aiv=True whose vector statements compute one lane's part, a
`tile.aiv_shard` where a cube tile reaches the vector side (Vec, halved) and a `tile.aic_gather`
where a vector tile reaches the cube (Mat, doubled); ExpandMixedKernel turns them into transfers
and SplitVectorKernel only stamps the split codes.

Regions: inside `for aiv_id in pl.split_aiv(2, mode=M)` the author writes one lane's code; the
region is erased (`aiv_id = get_subblock_idx()`). Mode NONE (task-parallel lanes, seed 004
"replay path"): both lanes run the whole region on the full tiles (`aiv_shard` keeps the shape),
SplitVectorKernel dual-dispatches the AIV without the lane-1 replay; a gather is rejected.
Placement errors: a vector op outside every region, a cube op inside one, two modes in one kernel.

AUTO (attr split=M on a mixed InCore kernel, no regions): the pass writes the lane code itself
(lane_halving.py) — C→V moves become aiv_shard, V→C moves aic_gather (a Left / Right target then
moves from the gathered Mat tile), every Vec tile is cut along the split axis, GM loads / stores
move by `aiv_lane * S`. A pure vector pl.split kernel is left whole (SplitVectorKernel halves it once
it is an AIV). A ragged boundary whose lanes pto-isa could not place at the physical half (13 of
16 rows: 8 and 5) is rebalanced when the whole vector region derives from it (ragged_rebalance.py):
the lanes split the valid region evenly (7 and 6) and the shard carries `lane_stride=7`; otherwise
the unplaceable extents are rejected at the transfer.
The transpose check (seed 004 "untransposable split") covers both forms: a `tile.transpose`
moving a non-singleton split axis is rejected, naming the mode, NONE and a column slice.

    before:  z_vec: Tile[[16, 16], Vec] = move(z: Acc, Vec);  out = store(add(z_vec, b), [0, 0], out)   attrs {split: UP_DOWN}
    after:   aiv_lane = get_subblock_idx(); z_vec: Tile[[8, 16], Vec] = aiv_shard(z, split=1)
             out = store(add(z_vec, b'), [0 + aiv_lane * 8, 0], out)              attrs {split: UP_DOWN, split_aiv: True}
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INDEX
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import BinaryExpr, GlobalVar, MakeTuple, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import CUBE, VECTOR, create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts, SplitAivScopeStmt, flatten_to_stmts
from pypto.ir.types import ScalarType, TileType
from pypto.ir.visitor import IRMutator, collect
from pypto.passes.analysis import as_seq, calls_in
from pypto.passes.expand_mixed_kernel.affinity import V2C, boundary_direction, call_affinity
from pypto.passes.expand_mixed_kernel.construct import fill_defs, is_mixed
from pypto.passes.expand_mixed_kernel.split_code import AXIS, lane_stride, split_mode
from pypto.passes.lane_halving import LaneHalver, dim
from pypto.passes.ragged_rebalance import resolve_lane_stride
from pypto.passes.expand_mixed_kernel.transpose_hazard import transpose_split_hazard
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties

_BOUNDARY = ("tile.aiv_shard", "tile.aic_gather")
_LANE = "aiv_lane"


def _placement_errors(func: Function, regions: list) -> None:
    inside = set()
    for r in regions:
        for c in calls_in(r.body):
            inside.add(id(c))
            if isinstance(c.op, GlobalVar) or c.op.name in _BOUNDARY or boundary_direction(c):
                continue
            if call_affinity(c) == CUBE:
                raise UnsupportedError(f"cube op '{c.op.name}' inside a pl.split_aiv region of kernel {func.name}",
                                       c.span, hint="compute cube values before the region and pass them in "
                                                    "with pl.aiv_shard(x)")
    for c in calls_in(func.body):
        if id(c) in inside or isinstance(c.op, GlobalVar) or boundary_direction(c):
            continue
        if c.op.name in _BOUNDARY:
            raise UnsupportedError(f"{c.op.name} outside every pl.split_aiv region of kernel {func.name}", c.span)
        if call_affinity(c) == VECTOR:
            raise UnsupportedError(f"vector op '{c.op.name}' sits outside every pl.split_aiv region of kernel "
                                   f"{func.name}", c.span, hint="move it into the region (each lane runs the "
                                                                "region on its own part)")


class _Erase(IRMutator):
    def mutate_split_aiv_scope_stmt(self, s):
        lane = AssignStmt(s.lane_var, create_op_call("tile.get_subblock_idx", [], {}, s.span), s.span)
        return as_seq([lane, self.mutate(s.body)], s.span)

    def mutate_seq_stmts(self, s):
        out = []
        for x in s.stmts:
            nx = self.mutate(x)
            out.extend(nx.stmts if isinstance(nx, SeqStmts) and isinstance(x, SplitAivScopeStmt) else [nx])
        return s.replace(stmts=tuple(out))


# the detector is shared with ExpandMixedKernel's fallback check (seed 004)
_transpose_hazard = transpose_split_hazard


def _check_transposes(func: Function, mode, region_form: bool, span) -> None:
    call = _transpose_hazard(func.body, AXIS[mode])
    if call is None:
        return
    form = (f"pl.split_aiv(2, mode=pl.SplitMode.{mode.name})" if region_form
            else f"pl.split(pl.SplitMode.{mode.name})")
    src = getattr(call.args[0], "name_hint", "its source")
    raise UnsupportedError(f"{form}: tile.transpose of '{src}' in kernel {func.name} swaps the split axis "
                           f"({'rows' if AXIS[mode] == 0 else 'columns'}), so each lane's half would move to the "
                           f"other dimension and the result would be wrong", call.span or span,
                           hint="use pl.SplitMode.NONE for this kernel, split along the other axis, or take a "
                                "column slice (row slice) of the source before transposing it")


def _reject_gathers(func: Function, regions: list) -> None:
    """NONE lanes are task-parallel: both run the whole region, so a gather would hand the cube two
    full tiles for one pop; the halves-rejoining gather needs a split axis."""
    for r in regions:
        for c in calls_in(r.body):
            if not isinstance(c.op, GlobalVar) and c.op.name == "tile.aic_gather":
                raise UnsupportedError(f"pl.aic_gather inside a pl.split_aiv(2, mode=pl.SplitMode.NONE) region of "
                                       f"kernel {func.name}: both lanes run the whole region, so the cube would "
                                       f"receive two tiles for one pop", c.span,
                                       hint="use pl.SplitMode.UP_DOWN or LEFT_RIGHT to rejoin the lanes' halves")


def _lane_params(func: Function, mode, lane: Var) -> tuple:
    """A Vec tile handed in whole (a hand-built kernel's parameter) is sliced to the lane's part at entry,
    so every Vec value the region computes with is per lane."""
    axis, stmts, mapping = AXIS[mode], [], {}
    for p in func.params:
        t = p.type
        n = dim(t, axis) if isinstance(t, TileType) and t.memory_space is MemorySpace.Vec else None
        if n is None or n <= 1:
            continue
        stride = lane_stride(n)
        shape = [const(stride, INDEX) if k == axis else d for k, d in enumerate(t.shape)]
        offset = [BinaryExpr("mul", lane, const(stride, INDEX)) if k == axis else const(0, INDEX)
                  for k in range(len(t.shape))]
        part = create_op_call("tile.slice", [p, MakeTuple(shape), MakeTuple(offset)], {}, p.span)
        mapping[p] = Var(f"{p.name_hint}_lane", part.type, p.span)
        stmts.append(AssignStmt(mapping[p], part, p.span))
    return stmts, mapping


def _fills_kept_whole(body) -> frozenset:
    """Vec constant fills a V→C move hands to the cube (a loop's zero accumulator): ExpandMixedKernel
    re-creates them on the cube side, so they keep the full shape and their move stays a move."""
    fills = fill_defs(body)
    moved = {c.args[0] for c in calls_in(body) if boundary_direction(c) == V2C and c.op.name == "tile.move"}
    return frozenset(v for v in fills if v in moved)


def _lower_auto(func: Function, mode) -> Function:
    """AUTO pl.split on a mixed kernel (seed 004): C→V moves become tile.aiv_shard, V→C moves
    tile.aic_gather, the vector region is cut to the lane's part; the kernel is then lowered exactly
    like one written with pl.split_aiv regions (split_aiv=True)."""
    lane = Var(_LANE, ScalarType(INDEX), func.span)
    entry, params = _lane_params(func, mode, lane)
    keep_full = _fills_kept_whole(func.body)
    halver = LaneHalver(func, mode, lane, boundaries=True, keep_full=keep_full,
                        stride=resolve_lane_stride(func, AXIS[mode], keep_full))
    halver.map.update(params)
    body = halver.mutate(func.body)
    ident = AssignStmt(lane, create_op_call("tile.get_subblock_idx", [], {}, func.span), func.span)
    return func.replace(body=SeqStmts([ident, *entry, *flatten_to_stmts(body)], func.span),
                        attrs={**func.attrs, "split_aiv": True})


def _run(func: Function, program: Program) -> Function:
    whole = split_mode(func.attrs)
    regions = collect(func.body, lambda n: isinstance(n, SplitAivScopeStmt))
    if whole is not None and not regions:
        _check_transposes(func, whole, False, func.span)
    if func.func_type is not FunctionType.InCore:
        return func
    if not regions:
        if whole is not None and not func.attrs.get("split_aiv") and is_mixed(func.body):
            return _lower_auto(func, whole)
        return func      # a pure vector pl.split kernel is halved by SplitVectorKernel once it is an AIV
    modes = {r.split for r in regions}
    if len(modes) > 1:
        raise UnsupportedError(f"kernel {func.name} mixes pl.split_aiv modes {sorted(m.name for m in modes)}",
                               regions[0].span, hint="use one mode for every region of a kernel")
    for r in regions:
        if r.count != 2:
            raise UnsupportedError(f"pl.split_aiv({r.count}): a cluster has exactly 2 AIV lanes", r.span)
    _placement_errors(func, regions)
    mode = regions[0].split
    if mode.value == 0:
        _reject_gathers(func, regions)
    else:
        _check_transposes(func, mode, True, regions[0].span)
    body = _Erase().mutate(func.body)
    return func.replace(body=body, attrs={**func.attrs, "split": mode, "split_aiv": True})


def lower_auto_vector_split():
    return function_pass("LowerAutoVectorSplit", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.TileMemoryInferred}))
