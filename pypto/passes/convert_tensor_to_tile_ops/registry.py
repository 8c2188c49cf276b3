"""The op conversion registry: one entry per tensor op, saying how it becomes tile ops.

A converter gets the original Call and a ConversionContext (`ctx.tile(arg)` gives an
argument's on-chip value, `ctx.plain(arg)` the renamed GM value, `ctx.emit(stmt)` adds a
statement before the converted one) and returns the replacement expression.

    @converts("tensor.exp")
    def _exp(call, ctx):
        return ctx.op("tile.exp", [ctx.tile(call.args[0])], call)
"""

from __future__ import annotations

from typing import Callable

from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.enums import AtomicType, MemorySpace, TensorLayout
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple
from pypto.ir.ops.registry import all_ops, create_op_call, has_op
from pypto.ir.types import TensorType, TileType

CONVERTERS: dict[str, Callable] = {}

# Tensor ops that read GM themselves: their tensor operands get no entry tile.load.
SELF_LOADING = {"tensor.slice", "tensor.read", "tensor.write", "tensor.assemble", "tensor.matmul",
                "tensor.matmul_acc", "tensor.create", "tensor.gather", "tensor.expand_clone"}

# A Mat tile.load this pass makes for a cube operand carries this call attr, so later passes can tell
# a compiler-made Mat bridge from a Mat load the user wrote (the reference marks its bridges the same way).
MAT_BRIDGE_ATTRS = {"__compiler_tensor_to_tile_mat_bridge": True}


def converts(*names: str):
    def deco(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return deco


def zeros(rank: int) -> MakeTuple:
    return MakeTuple([ConstInt(0) for _ in range(rank)])


def tile_op(ctx, name: str, args: list, call: Call, kwargs: dict | None = None) -> Call:
    """Build `name(args, **kwargs)`, keeping the tensor op's kwargs the tile op also declares."""
    if not has_op(name):
        raise UnsupportedError(f"ConvertTensorToTileOps: {call.op.name} lowers to {name}, which is not a registered op",
                               call.span, hint="use the tile-level op directly")
    from pypto.ir.ops.registry import get_op
    declared = get_op(name).kwargs
    kw = {k: v for k, v in call.kwargs.items() if k in declared}
    kw.update(kwargs or {})
    return create_op_call(name, args, kw, call.span)


# The row reductions' scratch holds whole 128-element column blocks: the instruction's reduction tree
# walks the row in blocks of that width, so a narrower row still needs a full block (the reference
# pads the same way). The arg* reductions keep a scratch shaped like their operand.
ROW_REDUCE_SCRATCH_BLOCK = 128
_BLOCK_PADDED_SCRATCH = {"tile.row_sum", "tile.row_max", "tile.row_min", "tile.row_prod"}


def _scratch(ctx, like, call: Call, padded: bool = False):
    t = like.type
    shape = list(t.shape)
    if padded and shape and isinstance(shape[-1], ConstInt):
        block = ROW_REDUCE_SCRATCH_BLOCK
        shape[-1] = ConstInt(-(-shape[-1].value // block) * block)
    return ctx.bind("tmp", create_op_call("tile.create", [shape],
                                          {"dtype": t.dtype, "target_memory": t.memory_space or MemorySpace.Vec},
                                          call.span))


def _one_to_one(call: Call, ctx):
    """tensor.X(a, b, ...) → tile.X(tile(a), tile(b), ...) for an op declaring `lowers_to`; a trailing
    `tmp` operand the tile op needs (the PTO instruction's scratch buffer) is a fresh tile shaped like
    the first operand."""
    from pypto.ir.ops.registry import get_op
    name = call.op.lowers_to
    args = [ctx.tile(a) for a in call.args]
    if has_op(name):
        target = get_op(name)
        needed = target.min_args if target.min_args is not None else len(target.args)
        precise_scratch = call.kwargs.get("high_precision") and "high_precision" not in target.kwargs
        if ((len(args) < needed or precise_scratch) and len(target.args) > len(args) and target.args[len(args)] == "tmp"
                and args and isinstance(args[0].type, TileType)):
            args.append(_scratch(ctx, args[0], call, padded=name in _BLOCK_PADDED_SCRATCH))
    return tile_op(ctx, name, args, call)


# Every op declaring its tile form (OpDef.lowers_to) converts 1:1; the ops below are hand-written.
for _op in all_ops().values():
    if _op.lowers_to is not None:
        CONVERTERS[_op.name] = _one_to_one


@converts("tensor.mrgsort_format2")
def _mrgsort_format2(call: Call, ctx):
    """The tile merge writes into a scratch tile of the result's shape, its last operand."""
    t = call.type
    tmp = ctx.bind("tmp", create_op_call("tile.create", [list(t.shape)],
                                         {"dtype": t.dtype, "target_memory": MemorySpace.Vec}, call.span))
    return tile_op(ctx, "tile.mrgsort_format2", [ctx.tile(a) for a in call.args] + [tmp], call)


@converts("tensor.create")
def _create(call: Call, ctx):
    return tile_op(ctx, "tile.create", [ctx.plain(call.args[0])], call, {"target_memory": MemorySpace.Vec})


@converts("tensor.slice")
def _slice(call: Call, ctx):
    """A GM slice becomes a load of that window (Mat when a matmul consumes it)."""
    src = ctx.plain(call.args[0])
    shape, offsets = ctx.plain(call.args[1]), ctx.plain(call.args[2])
    valid = ctx.plain(call.args[3]) if len(call.args) > 3 and isinstance(call.args[3], MakeTuple) else shape
    if isinstance(src.type, TileType):
        return tile_op(ctx, "tile.slice", [src, shape, offsets] + list(call.args[3:4]), call)
    if call.kwargs.get("pad_value") is not None:
        raise UnsupportedError("pl.slice(..., pad_value=...) of a GM tensor is not supported yet", call.span,
                               hint="load the window with pl.load, then pl.fillpad it")
    if ctx.feeds_matmul:
        return create_op_call("tile.load", [src, offsets, shape, valid], {"target_memory": MemorySpace.Mat},
                              call.span, attrs=dict(MAT_BRIDGE_ATTRS))
    return create_op_call("tile.load", [src, offsets, shape, valid], {"target_memory": MemorySpace.Vec}, call.span)


@converts("tensor.assemble")
def _assemble(call: Call, ctx):
    """Writing a converted value into a GM tensor is a store; into a tile, a tile.assemble."""
    target = ctx.plain(call.args[0])
    source = ctx.plain(call.args[1])
    if source in ctx.k.param_tiles:
        source = ctx.k.param_tiles[source]
    elif isinstance(source.type, TensorType):   # a GM source is copied through an on-chip tile
        shape = list(source.type.shape)
        source = ctx.bind(f"{getattr(source, 'name_hint', 'src')}_tile",
                          create_op_call("tile.load", [source, zeros(len(shape)), shape, shape],
                                         {"target_memory": MemorySpace.Vec}, call.span))
    offsets = ctx.plain(call.args[2])
    atomic = call.kwargs.get("atomic", AtomicType.None_)
    if isinstance(target.type, TensorType):
        ctx.note_written(target)
        return create_op_call("tile.store", [source, offsets, target], {"atomic": atomic}, call.span)
    if atomic is not AtomicType.None_:
        raise UnsupportedError("pl.assemble(..., atomic=pl.AtomicType.Add) into an on-chip tile is not supported; "
                               "atomic accumulation targets a GM tensor", call.span,
                               hint="assemble into the output tensor, or add the tiles with pl.add")
    return tile_op(ctx, "tile.assemble", [target, source, offsets], call)


@converts("tensor.read", "tensor.write")
def _element(call: Call, ctx):
    """Scalar access: on a converted value it is tile.read / tile.write; on GM it stays (it reads GM itself)."""
    src = ctx.plain(call.args[0])
    rest = [ctx.plain(a) for a in call.args[1:]]
    if isinstance(src.type, TileType) or src in ctx.k.param_tiles:
        src = ctx.tile(src)
        return tile_op(ctx, "tile." + call.op.short_name, [src] + rest, call)
    if call.op.name == "tensor.write":
        ctx.note_written(src)
    return call.replace(args=tuple([src] + rest))


@converts("tensor.dim")
def _dim(call: Call, ctx):
    """Kernel shapes are known from the tensor's type: the dim is that shape entry."""
    t = ctx.plain(call.args[0]).type
    axis = call.args[1]
    if isinstance(axis, ConstInt) and isinstance(t, (TensorType, TileType)):
        return t.shape[axis.value if axis.value >= 0 else len(t.shape) + axis.value]
    return call.replace(args=tuple(ctx.plain(a) for a in call.args))


def _cube_operand(ctx, arg, transposed: bool, call: Call):
    """A matmul operand as the cube's Mat tile (seed 003, MatmulSlice): a GM tensor (or slice) is a
    natural Mat load, a Vec or Acc result moves to Mat in its own shape, and a_trans / b_trans is a zero-copy
    tile.transpose_view of that Mat tile. The Mat → Left / Right moves are InferTileMemorySpace's."""
    v = ctx.plain(arg)
    if isinstance(v.type, TensorType):
        shape = list(v.type.shape)
        v = ctx.bind(f"{getattr(v, 'name_hint', 'operand')}_mat",
                     create_op_call("tile.load", [v, zeros(len(shape)), shape, shape],
                                    {"target_memory": MemorySpace.Mat}, call.span, attrs=dict(MAT_BRIDGE_ATTRS)))
    elif v.type.memory_space in (MemorySpace.Vec, MemorySpace.Acc):
        # a Vec result, or an earlier matmul's Acc result (the FIXPIPE writes it back to L1), moves to Mat
        v = ctx.bind(f"{v.name_hint}_mat", create_op_call("tile.move", [v], {"target_memory": MemorySpace.Mat},
                                                          call.span))
    elif v.type.memory_space is not MemorySpace.Mat:
        raise UnsupportedError(f"ConvertTensorToTileOps: {call.op.name} operand '{getattr(v, 'name_hint', '?')}' "
                               f"is a {v.type.memory_space.name} tile; the cube reads operands from Mat", call.span,
                               hint="pass the GM tensor (or a slice of it) to the matmul directly")
    if transposed:
        v = ctx.bind(f"{v.name_hint}_t", create_op_call("tile.transpose_view", [v], {}, call.span))
    return v


@converts("tensor.matmul", "tensor.matmul_acc")
def _matmul(call: Call, ctx):
    """lhs / rhs become Mat tiles; the product lands in Acc (matmul_acc accumulates in place). A product
    with batch dims (an operand of rank > 2) is tile.batch_matmul(_acc), which FlattenTileNdTo2D splits
    into one 2-D matmul per batch."""
    acc = [ctx.tile(call.args[0])] if call.op.name == "tensor.matmul_acc" else []
    left = _cube_operand(ctx, call.args[-2], call.kwargs.get("a_trans", False), call)
    right = _cube_operand(ctx, call.args[-1], call.kwargs.get("b_trans", False), call)
    name = "tile.batch_matmul" if len(call.type.shape) > 2 else "tile.matmul"
    result = create_op_call(name + "_acc" if acc else name, acc + [left, right], {}, call.span)
    if result.type.dtype is not call.type.dtype and not _fixpipe_drains_to(result.type, call.type):
        raise UnsupportedError(f"ConvertTensorToTileOps: {call.op.name} producing {call.type.dtype.name} from a "
                               f"{result.type.dtype.name} accumulator needs a cast on the way out, which is not "
                               "built yet", call.span, hint=f"use out_dtype=pl.{result.type.dtype.name}")
    return result


def _fixpipe_drains_to(acc_type, tensor_type) -> bool:
    """An FP16 / BF16 tensor.matmul stays an FP32 Acc tile: the FIXPIPE rounds it when it is stored to GM
    or moved to Mat, so no cast is emitted here (a Vec consumer sees the FP32 tile)."""
    from pypto.ir.ops.common import fixpipe_converts
    return fixpipe_converts(acc_type, tensor_type)


@converts("tensor.view")
def _view(call: Call, ctx):
    """A view of a GM tensor stays a zero-copy GM view: each converted op that reads it loads it at
    that point (ConversionContext.tile), a store into it writes the viewed tensor. Only a GM tensor can be
    viewed: the result of an op this pass lowers to a tile is refused, as the reference does (pl.reshape
    is the on-chip spelling)."""
    src = ctx.plain(call.args[0])
    if isinstance(src.type, TileType):
        raise ValueCheckError(f"ConvertTensorToTileOps: tensor.view needs a GM tensor that stays a tensor in the "
                              f"kernel; '{getattr(src, 'name_hint', '?')}' is the result of an op lowered to Tile "
                              "(viewing it is not supported)", call.span,
                              hint="view the GM tensor before slicing or computing, or use pl.reshape on the value")
    ctx.note_view(src)
    return call.replace(args=tuple(ctx.plain(a) for a in call.args))


@converts("tensor.get_block_idx", "tensor.get_block_num", "tensor.get_subblock_idx")
def _block_identity(call: Call, ctx):
    """The tensor-level block / lane identity is the tile-level one (an INDEX scalar either way)."""
    return create_op_call("tile." + call.op.short_name, [], {}, call.span)


@converts("tensor.reinterpret_view")
def _reinterpret_view(call: Call, ctx):
    """The tile form reads the bytes row-major: a DN (column-major) source would be regrouped along the
    wrong axis, so only packed ND tensors lower."""
    src = ctx.plain(call.args[0])
    view = getattr(src.type, "tensor_view", None)
    if view is not None and view.layout is not TensorLayout.ND:
        raise ValueCheckError(f"ConvertTensorToTileOps: tensor.reinterpret_view of '{getattr(src, 'name_hint', '?')}' "
                              f"({view.layout.name}): an InCore reinterpretation lowers only packed ND tensors",
                              call.span, hint="reinterpret an ND tensor")
    return _one_to_one(call, ctx)


@converts("pld.tensor.remote_store")
def _remote_store(call: Call, ctx):
    """A push of a tensor value into a peer's window is the tile push of its on-chip copy: a value this
    kernel computed is already a tile, a GM tensor is loaded (a natural Vec tile.load) first. The window
    is written, so its parameter becomes Out / InOut."""
    src = ctx.tile(call.args[0])
    target = ctx.plain(call.args[1])
    ctx.note_written(target)
    return create_op_call("pld.tile.remote_store", [src, target, ctx.plain(call.args[2]), ctx.plain(call.args[3])],
                          {"atomic": call.kwargs.get("atomic", AtomicType.None_)}, call.span)


_GM_SOURCE_OPS = {"pld.tensor.put": 2}    # op → index of the source that must stay a GM tensor


def check_gm_source(e) -> None:
    """pld.tensor.put pushes GM → remote GM (TPUT reads a tensor): a value the kernel computed is a
    tile by now, which TPUT cannot read. Say so at the put the author wrote."""
    if isinstance(e, Call) and not isinstance(e.op, GlobalVar) and e.op.name in _GM_SOURCE_OPS:
        i = _GM_SOURCE_OPS[e.op.name]
        if i < len(e.args) and isinstance(e.args[i].type, TileType):
            raise ValueCheckError(f"{e.op.name} src must be a GM tensor; '{getattr(e.args[i], 'name_hint', '?')}' is "
                                  "a value this kernel computes (an on-chip tile)", e.span,
                                  hint="push a computed tile to a peer with pld.tile.remote_store, or store it "
                                       "to a GM tensor first and put that")


def _static_2d(dims):
    vals = [d.value if isinstance(d, ConstInt) else None for d in dims]
    return vals if len(vals) == 2 and None not in vals else None


@converts("pld.tensor.put", "pld.tensor.get")
def _one_sided_copy(call: Call, ctx):
    """A 2-D one-sided copy becomes a Vec staging tile plus the tile-level transfer, which pto-isa's TPUT /
    TGET walks over the whole region chunk by chunk (seed 001: the stage is a bounded relay, sized
    [chunk_rows, chunk_cols] when given, else the region bounded to one 16 KiB UB tile). The written side
    (the peer window for put, the local tensor for get) becomes Out / InOut. Other ranks, dynamic
    extents and pipeline=True (two alternating stages) stay for LowerCompositeOps' explicit chunk loop."""
    from pypto.passes.lower_composite_ops.collective_transfer import _stage_shape
    kind = call.op.name.rsplit(".", 1)[-1]
    args = [ctx.plain(a) for a in call.args]
    dst, peer, src = args[:3]
    check_gm_source(call.replace(args=tuple(args)))
    shape = _static_2d(args[5].elements) if len(args) == 6 else _static_2d(src.type.shape)
    if shape is None or call.kwargs.get("pipeline") or not isinstance(dst.type, TensorType) \
            or not isinstance(src.type, TensorType):
        return call.replace(args=tuple(args))
    rows, cols = shape
    kw = call.kwargs
    stage_shape = _stage_shape(rows, cols, src.type.dtype.get_byte(), kw.get("chunk_rows", 0), kw.get("chunk_cols", 0))
    stage = ctx.bind(f"t{kind}_stage", create_op_call("tile.create", [list(stage_shape)],
                                                      {"dtype": src.type.dtype, "target_memory": MemorySpace.Vec},
                                                      call.span))
    ctx.note_written(dst)
    tile_kwargs = {"atomic": kw.get("atomic", AtomicType.None_)} if kind == "put" else {}
    return create_op_call(f"pld.tile.{kind}", [dst, peer, src, stage] + args[3:], tile_kwargs, call.span)


@converts("tensor.ci")
def _ci(call: Call, ctx):
    """A literal start takes the sequence's dtype (TCI's scalar operand has the tile's element type)."""
    start = ctx.plain(call.args[0])
    if isinstance(start, ConstInt) and start.dtype is not call.kwargs["dtype"]:
        start = ConstInt(start.value, call.kwargs["dtype"], start.span)
    return tile_op(ctx, "tile.ci", [start, ctx.plain(call.args[1])], call)
