"""tile.select → tile.sel / tile.sels with backend-planned scratch (seed 001, "Algorithm (tile.select rule)").

    on_true  on_false   emitted
    tile     tile       tile.create (TSEL scratch) + tile.sel(mask, T, F, tmp)
    tile     scalar     tile.create (TSELS scratch) + tile.sels(mask, T, tmp, F)   when the plan allows,
                        else tile.full(F) + TSEL scratch + tile.sel(mask, T, full, tmp)
    scalar   tile       tile.full(T) + TSEL scratch + tile.sel(mask, full, F, tmp)  (TSELS has no
                        scalar-on-true form)

The mask already is the packed predicate (checked by the op's type rule through
is_packed_predicate_mask), so the rule never re-compares. TSELS is taken only for rank-2
sources with static columns; anything else (an N-D source included: this pass runs before
FlattenTileNdTo2D and TSELS is 2-D only) goes through full + TSEL, which FlattenTileNdTo2D folds
to 2-D with the other element-wise ops. tile.full marks its result fully
valid and tile.sel takes its valid region from its lhs, so a materialized branch is retyped
with the other branch's view (only the view) to keep a narrowed select narrow. Scratch tiles
carry target_memory=Vec explicitly: this pass runs before InferTileMemorySpace.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, as_int
from pypto.ir.ops.tile_select import literal_value
from pypto.ir.types import TileType
from pypto.passes.context import PassContext
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.scratch import ScratchPlan, plan_op_scratch


def _backend() -> str:
    return PassContext.current().get_platform().name


def _scratch(b: LoweringBuilder, qualifier: str, plan: ScratchPlan) -> Expr:
    return b.bind(qualifier, b.op("tile.create", [list(plan.shape)],
                                  {"dtype": plan.dtype, "target_memory": MemorySpace.Vec}))


def _materialize(b: LoweringBuilder, scalar: Expr, like: TileType) -> Expr:
    """tile.full of the literal, retyped with the other branch's view (its valid region)."""
    full = b.op("tile.full", [list(like.shape)], {"dtype": like.dtype, "value": literal_value(scalar)})
    full = full.replace(type=TileType(like.shape, like.dtype, tile_view=like.tile_view,
                                      memory_space=full.type.memory_space))
    return b.bind("full", full)


def _tsel(b: LoweringBuilder, call: Call, mask: Expr, lhs: Expr, rhs: Expr) -> Call:
    backend = _backend()
    dtype = lhs.type.dtype
    plan = plan_op_scratch(backend, "tile.sel", dtype)
    if plan is None:
        raise UnsupportedError(f"tile.select of {dtype.name} tiles is not supported on {backend}: neither TSEL nor "
                               "TSELS takes that dtype there", call.span,
                               hint="cast the branches to a 16-bit or wider dtype, select, and cast back")
    tmp = _scratch(b, "sel_tmp", plan)
    return b.op("tile.sel", [mask, lhs, rhs, tmp])


def lower_select_rule(call: Call, args: tuple, b: LoweringBuilder) -> Expr:
    mask, on_true, on_false = args
    t_tile, f_tile = isinstance(on_true.type, TileType), isinstance(on_false.type, TileType)
    if t_tile and f_tile:
        return _tsel(b, call, mask, on_true, on_false)
    if t_tile:
        src: TileType = on_true.type
        cols = as_int(src.shape[1]) if src.rank == 2 else None
        plan = plan_op_scratch(_backend(), "tile.sels", src.dtype, cols) if cols is not None else None
        if plan is not None:
            tmp = _scratch(b, "sels_tmp", plan)
            return b.op("tile.sels", [mask, on_true, tmp, on_false])
        return _tsel(b, call, mask, on_true, _materialize(b, on_false, src))
    return _tsel(b, call, mask, _materialize(b, on_true, on_false.type), on_false)
