"""LowerAutoVectorSplit: explicit `pl.split_aiv` regions of a kernel become lane code (manual mode).

Requires: SSAForm, TileMemoryInferred / Produces: AivSplitLoweredValid (attrs) / Invalidates: —
Reference: pass doc 20 (compiler-and-runtime.md §2, dump 21), the region half. Inside
`for aiv_id in pl.split_aiv(2, mode=M)` the author writes one lane's code: `pl.aiv_shard(x)`
receives the lane's part of a cube tile, `pl.aic_gather(y)` hands the lane's part back. The
region is erased (`aiv_id = get_subblock_idx()`), the kernel gets attrs split=M and
split_aiv=True, and ExpandMixedKernel turns the shard / gather into transfers; SplitVectorKernel
then runs the vector half on both lanes without halving anything (the author already did).
Mode NONE (task-parallel lanes, seed 004 "replay path"): both lanes run the whole region on the
full tiles (`aiv_shard` keeps the shape; each lane picks its work by `aiv_id`), SplitVectorKernel
dual-dispatches the AIV without the lane-1 replay; a gather is rejected (no axis to rejoin).
Placement errors: a vector op outside every region, a cube op inside one, two modes in one
kernel. The AUTO form (`pl.split(M)` without regions) is halved by SplitVectorKernel (after
ExpandMixedKernel has separated the vector side; its docstring says why), but its
transpose check lives here (seed 004 "untransposable split"): a `tile.transpose` moving a
non-singleton split axis is rejected for both forms, naming the mode, NONE and a column slice.

    before:  for aiv_id in pl.split_aiv(2, mode=UP_DOWN): h = aiv_shard(z); ...
    after:   aiv_id = tile.get_subblock_idx(); h = aiv_shard(z, split=1); ...   attrs {split: UP_DOWN, split_aiv: True}
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import ConstInt, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import CUBE, VECTOR, create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts, SplitAivScopeStmt
from pypto.ir.types import TileType
from pypto.ir.visitor import IRMutator, collect
from pypto.passes.analysis import as_seq, calls_in
from pypto.passes.expand_mixed_kernel.affinity import boundary_direction, call_affinity
from pypto.passes.expand_mixed_kernel.split_code import AXIS, split_mode
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties

_BOUNDARY = ("tile.aiv_shard", "tile.aic_gather")


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


def _axis_arg(e, rank: int):
    v = e.value if isinstance(e, ConstInt) else e if isinstance(e, int) else None
    return None if v is None else v % rank


def _transpose_hazard(body, axis: int):
    """The first `tile.transpose` that moves a non-singleton split axis (a dynamic extent counts as
    non-singleton): each lane's half would land in the other dimension while the split still halves
    the original one. A singleton source carries no split data (broadcast no-op) and is fine."""
    for c in calls_in(body):
        if isinstance(c.op, GlobalVar) or c.op.name != "tile.transpose" or not isinstance(c.args[0].type, TileType):
            continue
        shape = c.args[0].type.shape
        swapped = {_axis_arg(c.args[1], len(shape)), _axis_arg(c.args[2], len(shape))}
        if axis not in swapped and None not in swapped:
            continue
        extent = shape[axis] if axis < len(shape) else None
        if isinstance(extent, ConstInt) and extent.value == 1:
            continue
        return c
    return None


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


def _run(func: Function, program: Program) -> Function:
    whole = split_mode(func.attrs)
    if whole is not None and not collect(func.body, lambda n: isinstance(n, SplitAivScopeStmt)):
        _check_transposes(func, whole, False, func.span)
    if func.func_type is not FunctionType.InCore:
        return func
    regions = collect(func.body, lambda n: isinstance(n, SplitAivScopeStmt))
    if not regions:
        return func
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
