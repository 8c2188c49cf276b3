"""PTO emitters for the gather / scatter ops and AIV-split boundaries (mirrors pypto/ir/ops/gather.py).

    idx = pl.tile.ci(0, [1, 64])           →  pto.tci ins(%c0_i32 : i32) outs(%idx : ...) {descending = false}
    d = pl.tile.scatter(d, src, idx)       →  pto.tscatter ins(%src, %idx : ..., ...) outs(%d : ...)
    acc = pl.tile.gather_row(acc, t, [r, 0], [i, 0], [1, 64])
        →  %v = pto.subview %acc[%r, %c0] sizes [1, 64] valid [...] ; %pv = pto.partition_view ... ;
           pto.tload ins(%pv : ...) outs(%v : ...)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.expr import ConstInt
from pypto.ir.types import TileType
from pypto.codegen.pto.registry import emits, lowered_away
from pypto.codegen.pto.types import mlir_dtype, tile_buf_type


@emits("tile.ci")
def _ci(ctx):
    start = ctx.call.args[0]
    flag = "true" if ctx.call.kwargs.get("descending") else "false"
    dtype = ctx.result_var.type.dtype
    ctx.emit(f"pto.tci ins({ctx.value_as(start, dtype)} : {mlir_dtype(dtype)}) outs({ctx.result} : "
             f"{ctx.result_type}) {{descending = {flag}}}")


@emits("tile.scatter")
def _scatter(ctx):
    """In place: the result is the `dst` buffer (the op reuses its input 0)."""
    ctx.emit_ins_outs("pto.tscatter", ctx.call.args[1:])


@emits("tile.gather_row")
def _gather_row(ctx):
    args = ctx.call.args
    dst, src, dst_off, src_off, shapes = args[:5]
    valid = args[5] if len(args) > 5 else shapes
    if ctx.call.kwargs.get("transpose"):
        raise UnsupportedError("PTO codegen: tile.gather_row(transpose=True) (the ZN window) is not emitted",
                               ctx.call.span)
    target = ctx.result
    rows_cols = ", ".join(str(d.value) if isinstance(d, ConstInt) else "?" for d in shapes.elements)
    extents = [ctx.index(v) for v in valid.elements]
    view = ctx.fresh("gather_row_view")
    dst_type = ctx.type_of(dst)
    view_type = tile_buf_type(TileType(list(shapes.elements), dst.type.dtype,
                                       memory_space=ctx.result_var.type.memory_space).with_valid_shape(valid.elements))
    offs = [ctx.index(o) for o in dst_off.elements]
    ctx.emit(f"{view} = pto.subview {target}[{', '.join(offs)}] sizes [{rows_cols}] valid [{', '.join(extents)}] : "
             f"{dst_type} -> {view_type}")
    pv, ptype = ctx.partition_view(src, src_off, list(valid.elements))
    ctx.emit(f"pto.tload ins({pv} : {ptype}) outs({view} : {view_type})")


lowered_away("tile.scatter_update", "ConvertTensorToTileOps lowers it into tile.ci / col_expand / muls / "
                                    "row_expand_add / scatter / cmps / sel (seed 003)")
lowered_away("tile.aiv_shard", "ExpandMixedKernel turns the C→V split boundary into tpush_to_aiv / tpop_from_aic")
lowered_away("tile.aic_gather", "ExpandMixedKernel turns the V→C split boundary into tpush_to_aic / tpop_from_aiv")
for _name in ("tensor.scatter_update", "tensor.paged_gather", "tensor.create_l1", "tensor.gather_row",
              "tensor.aiv_shard", "tensor.aic_gather"):
    lowered_away(_name, f"ConvertTensorToTileOps lowers {_name} to its tile form inside kernels (seed 003)")
