"""PTO emitters for the gather / scatter ops and AIV-split boundaries (mirrors pypto/ir/ops/gather.py).

    idx = pl.tile.ci(0, [1, 64])           →  pto.tci ins(%c0_i32 : i32) outs(%idx : ...) {descending = false}
    d = pl.tile.scatter(d, src, idx)       →  pto.tscatter ins(%src, %idx : ..., ...) outs(%d : ...)
    acc = pl.tile.gather_row(acc, t, [r, 0], [i, 0], [1, 64])
        →  %v = pto.subview %acc[%r, %c0] sizes [1, 64] valid [...] ; %pv = pto.partition_view ... ;
           pto.tload ins(%pv : ...) outs(%v : ...)
"""

from __future__ import annotations

from pypto.ir.expr import ConstInt
from pypto.codegen.pto.registry import emits, lowered_away
from pypto.codegen.pto.types import mlir_dtype, partition_view_type, tensor_view_type, tile_buf_type, window_type


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
    """A GM window loaded straight into a sub-view of the destination (in place). With transpose=True the
    window is read through a DN (column-major) view of the source, landing as its transpose."""
    args = ctx.call.args
    dst, src, dst_off, src_off, shapes = args[:5]
    valid = args[5] if len(args) > 5 else shapes
    transpose = bool(ctx.call.kwargs.get("transpose"))
    box = list(shapes.elements)[::-1] if transpose else list(shapes.elements)
    extent = list(valid.elements)[::-1] if transpose else list(valid.elements)
    target = ctx.result
    sizes = ", ".join(str(d.value) if isinstance(d, ConstInt) else "?" for d in box)
    extents = [ctx.index(v) for v in extent]
    view = ctx.fresh("gather_row_view")
    view_type = tile_buf_type(window_type(ctx.result_var.type, box).with_valid_shape(extent))
    offs = [ctx.index(o) for o in dst_off.elements]
    ctx.emit(f"{view} = pto.subview {target}[{', '.join(offs)}] sizes [{sizes}] valid [{', '.join(extents)}] : "
             f"{ctx.type_of(dst)} -> {view_type}")
    if transpose:
        rows, cols = (ctx.index(d) for d in src.type.shape)
        source = ctx.fresh(f"{src.name_hint}_dn_view")
        ctx.emit(f"{source} = pto.make_tensor_view {ctx.value(src)}, shape = [{cols}, {rows}], strides = "
                 f"[{ctx.const_index(1)}, {cols}] {{layout = #pto.layout<dn>}} : {tensor_view_type(src.type)}")
        window = [ctx.index(o) for o in list(src_off.elements)[::-1]]
        ptype = partition_view_type(extent, src.type.dtype)
        pv = ctx.fresh("pview")
        ctx.emit(f"{pv} = pto.partition_view {source}, offsets = [{', '.join(window)}], sizes = "
                 f"[{', '.join(extents)}] : {tensor_view_type(src.type)} -> {ptype}")
    else:
        pv, ptype = ctx.partition_view(src, src_off, extent)
    ctx.emit(f"pto.tload ins({pv} : {ptype}) outs({view} : {view_type})")


lowered_away("tile.scatter_update", "ConvertTensorToTileOps lowers it into tile.ci / col_expand / muls / "
                                    "row_expand_add / scatter / cmps / sel (seed 003)")
lowered_away("tile.aiv_shard", "ExpandMixedKernel turns the C→V split boundary into tpush_to_aiv / tpop_from_aic")
lowered_away("tile.aic_gather", "ExpandMixedKernel turns the V→C split boundary into tpush_to_aic / tpop_from_aiv")
for _name in ("tensor.scatter_update", "tensor.paged_gather", "tensor.create_l1", "tensor.gather_row",
              "tensor.aiv_shard", "tensor.aic_gather"):
    lowered_away(_name, f"ConvertTensorToTileOps lowers {_name} to its tile form inside kernels (seed 003)")
