"""PTO emitters for tile.* ops (mirrors pypto/ir/ops/tile.py): one `pto.t<op>` per op.

A 1:1 op names its instruction in its OpDef (`pto="pto.tadd"`) and gets the emitter
`pto.<name> ins(<operands> : <types>) outs(%dst : <type>)` from the loop below. Data movement,
views, in-place ops and ops with attributes have a small function each.

    tile.add(a, b)      →  pto.tadd ins(%a, %b : !pto.tile_buf<...>, !pto.tile_buf<...>) outs(%c : ...)
    tile.load(t, o, s)  →  %pv = pto.partition_view %t_view, offsets = [...], sizes = [...] : ...
                           pto.tload ins(%pv : !pto.partition_tensor_view<64x64xf32>) outs(%x : ...)
"""

from __future__ import annotations

from pypto.ir.enums import AtomicType, CastMode, CmpType
from pypto.ir.expr import ConstBool, ConstInt, MakeTuple
from pypto.ir.ops.registry import all_ops
from pypto.ir.types import TensorType
from pypto.codegen.pto.registry import emits, lowered_away
from pypto.codegen.pto.types import mlir_dtype, tile_buf_type, window_type

_ROUND_MODES = {CastMode.none: "NONE", CastMode.rint: "RINT", CastMode.round: "ROUND", CastMode.floor: "FLOOR",
                CastMode.ceil: "CEIL", CastMode.trunc: "TRUNC", CastMode.odd: "ODD"}
_CMP_MODES = {CmpType.EQ: "eq", CmpType.NE: "ne", CmpType.LT: "lt", CmpType.LE: "le", CmpType.GT: "gt",
              CmpType.GE: "ge"}


# high_precision=True selects PTOAS's precise mode: an attribute after the outs clause.
_PRECISION_ATTRS = {"tile.div": "div_precision", "tile.log": "log_precision", "tile.recip": "recip_precision"}


def _simple(pto_op: str, n_operands):
    def emit(ctx):
        precise = ctx.call.kwargs.get("high_precision") and ctx.call.op.name in _PRECISION_ATTRS
        trailing = f" {{precisionType = #pto<{_PRECISION_ATTRS[ctx.call.op.name]} high_precision>}}" if precise else ""
        ctx.emit_ins_outs(pto_op, None if n_operands is None else ctx.call.args[:n_operands], trailing=trailing)
    return emit


# A 1:1 op names its instruction in its OpDef (`pto=`): operands are the call's arguments in order
# (a trailing scratch tile included) unless `pto_operands` keeps only the first N.
for _op in all_ops().values():
    if _op.pto is not None:
        emits(_op.name)(_simple(_op.pto, _op.pto_operands))

lowered_away("tile.sin", "LowerCompositeOps expands it into an FP32 range reduction and a polynomial (seed 001)")
lowered_away("tile.cos", "LowerCompositeOps expands it into an FP32 range reduction and a polynomial (seed 001)")


# ---------------------------------------------------------------------------- memory and data movement
@emits("tile.alloc", "tile.create", binds_result=False)
def _allocation(ctx):
    """No instruction: the buffer is the pto.alloc_tile of the function head."""


@emits("tile.load")
def _load(ctx):
    tensor, offsets, _shapes, valid = ctx.call.args[:4]     # a 5th (tile_shape): the same N-D view, a 2-D tile
    sizes = valid.elements if isinstance(valid, MakeTuple) and valid.elements else _shapes.elements
    pv, ptype = ctx.partition_view(tensor, offsets, sizes)
    ctx.emit(f"pto.tload ins({pv} : {ptype}) outs({ctx.result} : {ctx.result_type})")


@emits("tile.store")
def _store(ctx):
    tile, offsets, out = ctx.call.args[:3]
    window = ctx.call.args[3].elements if len(ctx.call.args) > 3 else tile.type.valid_shape   # N-D window
    pv, ptype = ctx.partition_view(out, offsets, window)
    atomic = " {atomicType = #pto<atomic_type atomic_add>}" if ctx.call.kwargs.get("atomic") is AtomicType.Add else ""
    ctx.emit(f"pto.tstore ins({ctx.value(tile)} : {ctx.type_of(tile)}) outs({pv} : {ptype}){atomic}")
    if ctx.result_var is not None and isinstance(ctx.result_var.type, TensorType):
        ctx.alias_tensor(ctx.result_var, out)


@emits("tile.full")
def _full(ctx):
    value = ctx.call.kwargs["value"]
    dtype = ctx.result_var.type.dtype
    scalar = ctx.const(float(value) if dtype.is_float() else int(value), dtype)
    ctx.emit(f"pto.texpands ins({scalar} : {mlir_dtype(dtype)}) outs({ctx.result} : {ctx.result_type})")


@emits("tile.expands")
def _expands(ctx):
    ctx.emit_ins_outs("pto.texpands", ctx.call.args[1:])


@emits("tile.row_expand")
def _row_expand(ctx):
    ctx.emit_ins_outs("pto.trowexpand", ctx.call.args[1:2])


@emits("tile.col_expand")
def _col_expand(ctx):
    ctx.emit_ins_outs("pto.tcolexpand", ctx.call.args[1:2])


@emits("tile.col_sum")
def _col_sum(ctx):
    binary = len(ctx.call.args) == 2
    ctx.emit_ins_outs("pto.tcolsum", attr="{isBinary = true}" if binary else "")


@emits("tile.cast")
def _cast(ctx):
    mode = _ROUND_MODES[ctx.call.kwargs["mode"]]
    ctx.emit_ins_outs("pto.tcvt", ctx.call.args[:1], attr=f"{{rmode = #pto<round_mode {mode}>}}")


@emits("tile.cmp", "tile.cmps")
def _cmp(ctx):
    mode = _CMP_MODES[ctx.call.kwargs["cmp_type"]]
    ctx.emit_ins_outs("pto.tcmp" if ctx.call.op.name == "tile.cmp" else "pto.tcmps",
                      attr=f"{{cmpMode = #pto<cmp {mode}>}}")


def accumulate(ctx, acc_op: str, init_op: str, trailing: str = "") -> None:
    """In-place accumulation (matmul_acc / gemv_acc): ptoas wants the accumulator in ins() to be the outs()
    buffer itself. A runtime init_cond picks, per call, the initializing form or the accumulating one."""
    args = ctx.call.args
    dst, dst_type = ctx.result, ctx.result_type
    lhs, rhs = args[1], args[2]
    pair, pair_types = f"{ctx.value(lhs)}, {ctx.value(rhs)}", f"{ctx.type_of(lhs)}, {ctx.type_of(rhs)}"

    def line(initializing: bool) -> str:
        if initializing:
            return f"{init_op} ins({pair} : {pair_types}) outs({dst} : {dst_type}){trailing}"
        return f"{acc_op} ins({dst}, {pair} : {dst_type}, {pair_types}) outs({dst} : {dst_type}){trailing}"

    if len(args) == 3:
        ctx.emit(line(False))
        return
    init = args[3]
    if isinstance(init, (ConstInt, ConstBool)):
        ctx.emit(line(bool(init.value)))
        return
    ctx.structural(f"scf.if {ctx.value(init)} {{")
    ctx.indent(1)
    ctx.emit(line(True))
    ctx.indent(-1)
    ctx.structural("} else {")
    ctx.indent(1)
    ctx.emit(line(False))
    ctx.indent(-1)
    ctx.structural("}")


@emits("tile.matmul_acc")
def _matmul_acc(ctx):
    accumulate(ctx, "pto.tmatmul.acc", "pto.tmatmul")


@emits("tile.transpose")
def _transpose(ctx):
    args = ctx.call.args
    src = args[0]
    operands = [src] + ([args[3]] if len(args) > 3 else [])
    names = ", ".join(ctx.value(a) for a in operands)
    types = ", ".join(ctx.type_of(src) for _ in operands)
    ctx.emit(f"pto.ttrans ins({names} : {types}) outs({ctx.result} : {ctx.result_type})")


# ---------------------------------------------------------------------------- views (zero-copy)
def _treshape(ctx):
    src = ctx.call.args[0]
    out = ctx.fresh(ctx.result_var.name_hint)
    out_type = tile_buf_type(ctx.result_var.type)
    ctx.emit(f"{out} = pto.treshape {ctx.value(src)} : {ctx.type_of(src)} -> {out_type}")
    ctx.bind(ctx.result_var, out, out_type)


emits("tile.reshape", binds_result=True)(_treshape)
emits("tile.transpose_view", binds_result=True)(_treshape)


@emits("tile.slice", binds_result=True)
def _slice(ctx):
    args = ctx.call.args
    src, shape, offset = args[0], args[1], args[2]
    offs = [ctx.index(o) for o in offset.elements]
    sizes = ", ".join(str(d.value) if isinstance(d, ConstInt) else "?" for d in shape.elements)
    valid = ""
    if len(args) > 3 and isinstance(args[3], MakeTuple) and args[3].elements:
        valid = f" valid [{', '.join(ctx.index(v) for v in args[3].elements)}]"
    out = ctx.fresh(ctx.result_var.name_hint)
    out_type = tile_buf_type(ctx.result_var.type)
    ctx.emit(f"{out} = pto.subview {ctx.value(src)}[{', '.join(offs)}] sizes [{sizes}]{valid} : "
             f"{ctx.type_of(src)} -> {out_type}")
    ctx.bind(ctx.result_var, out, out_type)


@emits("tile.assemble")
def _assemble(ctx):
    """Copy `target` into the result buffer when they differ, then move `source` into a subview of it."""
    target, source, offset = ctx.call.args
    dst, dst_type = ctx.result, ctx.result_type
    if ctx.value(target) != dst:
        ctx.emit(f"pto.tmov ins({ctx.value(target)} : {ctx.type_of(target)}) outs({dst} : {dst_type})")
    offs = [ctx.index(o) for o in offset.elements]
    rows_cols = ", ".join(str(d.value) if isinstance(d, ConstInt) else "?" for d in source.type.shape)
    view = ctx.fresh("assemble_view")
    view_type = tile_buf_type(window_type(ctx.result_var.type, source.type.shape))
    ctx.emit(f"{view} = pto.subview {dst}[{', '.join(offs)}] sizes [{rows_cols}] : {dst_type} -> {view_type}")
    ctx.emit(f"pto.tmov ins({ctx.value(source)} : {ctx.type_of(source)}) outs({view} : {view_type})")


# ---------------------------------------------------------------------------- single elements
def _flat_offset(ctx, indices, shape) -> str:
    """Row-major element offset of `indices` in a tile / tensor of `shape`."""
    idx = [ctx.index(i) for i in indices.elements]
    total = None
    for k, name in enumerate(idx):
        stride = 1
        for d in shape[k + 1:]:
            stride *= d.value if isinstance(d, ConstInt) else 0
        term = name
        if stride != 1:
            term = ctx.fresh("off")
            ctx.emit(f"{term} = arith.muli {name}, {ctx.const_index(stride)} : index")
        if total is None:
            total = term
        else:
            s = ctx.fresh("off")
            ctx.emit(f"{s} = arith.addi {total}, {term} : index")
            total = s
    return total if total is not None else ctx.const_index(0)


@emits("tile.read")
def _read(ctx):
    src, indices = ctx.call.args
    off = _flat_offset(ctx, indices, src.type.shape)
    ctx.emit(f"{ctx.result} = pto.tgetval ins({ctx.value(src)}, {off} : {ctx.type_of(src)}, index) outs : "
             f"{ctx.result_type}")


@emits("tile.write")
def _write(ctx):
    dst, indices, value = ctx.call.args
    off = _flat_offset(ctx, indices, dst.type.shape)
    ctx.emit(f"pto.tsetval ins({off}, {ctx.value(value)} : index, {ctx.type_of(value)}) outs({ctx.value(dst)} : "
             f"{ctx.type_of(dst)})")
