"""tile.* ops: on-chip tile operations (loads, stores, vector compute). Each maps 1:1 to a PTO instruction.

Families share their type rules (pypto/ir/ops/common.py); this file only declares them:
names, arguments, kwargs with defaults, affinity, memory spec and effects.

    call = create_op_call("tile.add", [a, b])      # a, b: Tile[[64, 64], FP32] in Vec
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP32, INDEX, INT32, DataType
from pypto.ir.enums import AtomicType, CastMode, CmpType, MemorySpace, PadValue, TileLayout
from pypto.ir.expr import ConstInt, as_int
from pypto.ir.ops.common import (MASK_DTYPE, assemble_rule, cast_rule, check_valid_within, cmp_rule, cmps_rule, concat_rule, dims_equal,
                                 expands_rule, expect_scalar, expect_tensor, expect_tile, expect_tuple, fillpad_rule,
                                 fixpipe_converts, fmt_shape, packed_mask_shape, read_rule, reshape_rule, same_dtype,
                                 same_shape, scalar_fits, slice_rule, transpose_rule, write_rule)
from pypto.ir.ops.flat_window import flat_load_type, flat_store_check
from pypto.ir.ops.registry import CUBE, READ, READWRITE, SHARED, VECTOR, WRITE, Kwarg, OpDef, register_op
from pypto.ir.types import PtrType, TileType, TileView, implicit_tile_view

VEC = (MemorySpace.Vec,)


def vector_op(name: str, args: tuple, deduce, n_tiles: int = 1, **extra) -> OpDef:
    """A vector-unit op: runs on AIV, reads its tile operands from Vec, result stays in the lhs's space."""
    extra.setdefault("output_memory", "inherit")
    extra.setdefault("effects", {i: READ for i in range(n_tiles)})
    extra.setdefault("input_memory", {i: VEC for i in range(n_tiles)})
    return register_op(OpDef(name, args=args, deduce=deduce, affinity=VECTOR, **extra))


# ---------------------------------------------------------------------------- data movement
def _load_type(args, kw):
    t = expect_tensor("tile.load", "tensor", args[0])
    offsets = expect_tuple("tile.load", "offsets", args[1])
    shapes = expect_tuple("tile.load", "shapes", args[2])
    valid = expect_tuple("tile.load", "valid_shapes", args[3])
    if not (len(offsets) == len(shapes) == len(valid) == len(t.shape)):
        raise TypeCheckError(f"tile.load: offsets, shapes and valid_shapes need one entry per tensor dim ({len(t.shape)})")
    if kw["target_memory"] not in (MemorySpace.Vec, MemorySpace.Mat):
        raise TypeCheckError(f"tile.load: loads from GM may only land in Vec or Mat, not {kw['target_memory'].name}",
                             hint="load into Mat, then pl.move to Left / Right / Bias")
    _check_window("tile.load", "valid extent", t, offsets, valid)
    check_valid_within("tile.load", shapes, valid)
    if len(args) > 4:
        return flat_load_type(t, shapes, valid, expect_tuple("tile.load", "tile_shape", args[4]), kw["target_memory"])
    tt = TileType(shapes, t.dtype, memory_space=kw["target_memory"])
    return tt.with_valid_shape(valid) if valid else tt


# The optional 5th operand `tile_shape` (written by FlattenTileNdTo2D) reads the N-D window into its
# row-major 2-D tile [prod(leading), last] (pypto/ir/ops/flat_window.py).
register_op(OpDef("tile.load", args=("tensor", "offsets", "shapes", "valid_shapes", "tile_shape"), min_args=4,
                  kwargs={"target_memory": Kwarg(MemorySpace, MemorySpace.Vec)},
                  deduce=_load_type, output_memory="target_memory", effects={0: READ}, self_loading=True,
                  description="GM window → tile; outside valid_shapes the tile is padded per its pad value"))


def _store_type(args, kw):
    from pypto.ir.types import TensorType
    if isinstance(args[0].type, TensorType) and len(args) > 2 and isinstance(args[2].type, TileType):
        raise TypeCheckError("tile.store: the arguments look swapped: the first is a tensor and the third a tile",
                             hint="pl.store(tile, offsets, tensor) writes the tile into the tensor")
    tile = expect_tile("tile.store", "tile", args[0])
    offsets = expect_tuple("tile.store", "offsets", args[1])
    out = expect_tensor("tile.store", "output_tensor", args[2])
    if not fixpipe_converts(tile, out):              # an FP32 Acc tile may drain to FP16 / BF16 GM
        same_dtype("tile.store", tile.dtype, out.dtype, "tile and output tensor")
    if len(offsets) != out.rank:
        raise TypeCheckError(f"tile.store: offsets need one entry per tensor dim ({out.rank}), got {len(offsets)}")
    if len(args) > 3:
        flat_store_check(tile, expect_tuple("tile.store", "shapes", args[3]), out)
    elif tile.rank == out.rank:
        _check_window("tile.store", "the tile's valid extent", out, offsets, tile.valid_shape)
    return out


def _check_window(op: str, what: str, tensor, offsets, extents) -> None:
    """A GM window known at compile time must lie inside its tensor: the DMA would read or write
    outside it on hardware. Dims with a symbolic offset, extent or tensor size are checked at run time."""
    for d, (off, ext, size) in enumerate(zip(offsets, extents, tensor.shape)):
        o, e, n = as_int(off), as_int(ext), as_int(size)
        if o is None or e is None or n is None:
            continue
        if o < 0 or o + e > n:
            raise TypeCheckError(f"{op}: dim {d} window [{o}, {o + e}) is outside the tensor extent {n} "
                                 f"(offset {o} + {what} {e})",
                                 hint="check the offsets and shapes against the tensor's shape")


# The optional 4th operand `shapes` gives the N-D window a 2-D tile's valid rows are written to, row-major.
register_op(OpDef("tile.store", args=("tile", "offsets", "output_tensor", "shapes"), min_args=3, deduce=_store_type,
                  kwargs={"atomic": Kwarg(AtomicType, AtomicType.None_)},   # Add: accumulate into GM (split-K)
                  effects={0: READ, 2: WRITE}, reuses_input=2,
                  description="valid region of the tile → GM at offsets; the result is the updated tensor"))


def _move_type(args, kw):
    """A cube-side destination (Mat / Left / Right / Acc) imposes its native layout and fractal; a flat
    one (Vec) keeps the source's layout. blayout / slayout override either; valid_shape and pad carry."""
    t = expect_tile("tile.move", "tile", args[0])
    source = t.effective_view
    view = implicit_tile_view(kw["target_memory"])
    if view.is_default():
        view = view.replace(blayout=source.blayout, slayout=source.slayout)
    view = view.replace(valid_shape=source.valid_shape, pad=source.pad)
    if kw["blayout"] is not None:
        view = view.replace(blayout=kw["blayout"])
    if kw["slayout"] is not None:
        view = view.replace(slayout=kw["slayout"])
    return TileType(t.shape, t.dtype, tile_view=view, memory_space=kw["target_memory"])


register_op(OpDef("tile.move", args=("tile",),
                  kwargs={"target_memory": Kwarg(MemorySpace), "blayout": Kwarg(TileLayout, None),
                          "slayout": Kwarg(TileLayout, None)},
                  deduce=_move_type, output_memory="target_memory", effects={0: READ}, pto="pto.tmov",
                  description="copy a tile between on-chip memory spaces (e.g. Mat → Left)"))


def _create_type(args, kw):
    shape = expect_tuple("tile.create", "shape", args[0])
    view = None
    if kw["transpose"]:
        # the transposed Mat fractal (ZN): row-major blocks of column-major boxes, as gather_row(transpose) fills it
        if kw["target_memory"] is not MemorySpace.Mat:
            raise TypeCheckError(f"tile.create: transpose=True (the ZN layout) needs target_memory=Mat, "
                                 f"got {kw['target_memory'].name}")
        view = TileView(blayout=TileLayout.row_major, slayout=TileLayout.col_major)
    return TileType(shape, kw["dtype"], tile_view=view, memory_space=kw["target_memory"])


register_op(OpDef("tile.create", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "target_memory": Kwarg(MemorySpace, MemorySpace.Vec),
                          "transpose": Kwarg(bool, False)},
                  deduce=_create_type, output_memory="target_memory", affinity=SHARED,
                  description="an uninitialised tile (scratch or accumulation target)"))


def _full_type(args, kw):
    shape = expect_tuple("tile.full", "shape", args[0])
    return TileType(shape, kw["dtype"], memory_space=MemorySpace.Vec)


register_op(OpDef("tile.full", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "value": Kwarg((int, float))},
                  deduce=_full_type, output_memory=MemorySpace.Vec, affinity=VECTOR))


def _alloc_type(args, kw):
    if kw["size"] < 0:
        raise TypeCheckError(f"tile.alloc: size must be non-negative, got {kw['size']}")
    return PtrType()


register_op(OpDef("tile.alloc", kwargs={"memory_space": Kwarg(MemorySpace), "size": Kwarg(int), "addr": Kwarg(int, -1),
                                        "pinned": Kwarg(bool, False)},
                  deduce=_alloc_type, affinity=SHARED,
                  description="the base of a MemRef: `size` bytes in memory_space at addr (-1 until planned)"))


# ---------------------------------------------------------------------------- elementwise compute
# The regular elementwise, reduction and broadcast ops are rows of pypto/ir/ops/elementwise.py.
vector_op("tile.cast", ("x",), cast_rule("tile.cast"),
        kwargs={"target_type": Kwarg(DataType), "mode": Kwarg(CastMode, CastMode.round)})
vector_op("tile.cmp", ("lhs", "rhs"), cmp_rule("tile.cmp"), n_tiles=2,
        kwargs={"cmp_type": Kwarg(CmpType, CmpType.EQ)})
vector_op("tile.cmps", ("lhs", "rhs"), cmps_rule("tile.cmps"), kwargs={"cmp_type": Kwarg(CmpType, CmpType.EQ)})

# ---------------------------------------------------------------------------- broadcasts
vector_op("tile.expands", ("target", "scalar"), expands_rule("tile.expands"))

# ---------------------------------------------------------------------------- shape and view
vector_op("tile.reshape", ("x", "shape"), reshape_rule("tile.reshape"))
vector_op("tile.transpose", ("x", "axis1", "axis2", "tmp"), transpose_rule("tile.transpose"), min_args=3,
        effects={0: READ, 3: READWRITE}, not_inplace_safe=True)
vector_op("tile.slice", ("x", "shape", "offset", "valid_shape"), slice_rule("tile.slice"), min_args=3,
          kwargs={"pad_value": Kwarg(PadValue, None)})    # the window's pad outside valid_shape (None: none)
vector_op("tile.concat", ("src0", "src1"), concat_rule("tile.concat"), n_tiles=2, pto="pto.tconcat")


def _transpose_view_type(args, kw):
    """The NZ <-> ZN dual of a (Mat) tile: trailing dims swapped, block / scatter layouts flipped."""
    t = expect_tile("tile.transpose_view", "x", args[0])
    if t.rank < 2:
        raise TypeCheckError(f"tile.transpose_view: argument 'x' must be at least 2-D, got rank {t.rank}")
    flip = {TileLayout.row_major: TileLayout.col_major, TileLayout.col_major: TileLayout.row_major,
            TileLayout.none_box: TileLayout.none_box}
    view = t.effective_view
    shape, valid = list(t.shape), list(t.valid_shape)
    shape[-2:], valid[-2:] = shape[:-3:-1], valid[:-3:-1]
    view = view.replace(blayout=flip[view.blayout], slayout=flip[view.slayout], valid_shape=tuple(valid))
    return TileType(shape, t.dtype, tile_view=view, memory_space=t.memory_space)


# On hardware a zero-copy reinterpretation of the same bytes; here the result is its own buffer
# (the simulator keeps tiles logically row-major, so the transpose is materialised).
register_op(OpDef("tile.transpose_view", args=("x",), deduce=_transpose_view_type, output_memory="inherit",
                  effects={0: READ}, not_inplace_safe=True, description="the transposed (NZ <-> ZN) view of a tile, e.g. K^T for a matmul"))
register_op(OpDef("tile.assemble", args=("target", "source", "offset"), deduce=assemble_rule("tile.assemble"),
                  output_memory="inherit", effects={0: READWRITE, 1: READ}, reuses_input=0,
                  description="write source into target at offset (in place); the result is the updated target"))
vector_op("tile.fillpad", ("x",), fillpad_rule("tile.fillpad"), kwargs={"pad_value": Kwarg(PadValue, PadValue.zero)},
          pto="pto.tfillpad")

# ---------------------------------------------------------------------------- element access
register_op(OpDef("tile.read", args=("src", "indices"), deduce=read_rule("tile.read"), effects={0: READ},
                  description="one element of a tile as a scalar"))
register_op(OpDef("tile.write", args=("dst", "indices", "value"), deduce=write_rule("tile.write"),
                  output_memory="inherit", effects={0: READWRITE}, reuses_input=0,
                  description="set one element of a tile (in place); the result is the updated tile"))


# ---------------------------------------------------------------------------- select by mask
def _check_mask(name: str, mask_arg, t: TileType) -> None:
    """The mask is the packed predicate cmp / cmps produce for an operand of t's shape."""
    m = expect_tile(name, "mask", mask_arg)
    want, _ = packed_mask_shape(name, t.shape, t.valid_shape)
    if m.dtype is not MASK_DTYPE or not dims_equal(m.shape, want):
        raise TypeCheckError(f"{name}: argument 'mask' must be the packed {MASK_DTYPE.name} mask {fmt_shape(want)} "
                             f"of a {fmt_shape(t.shape)} comparison, got {fmt_shape(m.shape)} {m.dtype.name}",
                             hint="build masks with pl.cmp / pl.cmps on operands of the same shape")


def _sel_type(args, kw):
    a = expect_tile("tile.sel", "lhs", args[1])
    b = expect_tile("tile.sel", "rhs", args[2])
    same_dtype("tile.sel", a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
    same_shape("tile.sel", a.shape, b.shape)
    _check_mask("tile.sel", args[0], a)
    expect_tile("tile.sel", "tmp", args[3])
    return TileType(a.shape, a.dtype, tile_view=a.tile_view, memory_space=a.memory_space)


def _sels_type(args, kw):
    a = expect_tile("tile.sels", "src", args[1])
    _check_mask("tile.sels", args[0], a)
    expect_tile("tile.sels", "tmp", args[2])
    scalar_fits("tile.sels", a, expect_scalar("tile.sels", "scalar", args[3]), "scalar")
    return TileType(a.shape, a.dtype, tile_view=a.tile_view, memory_space=a.memory_space)


# sel: where the mask bit is set take lhs, else rhs. sels: src where set, else the scalar.
vector_op("tile.sel", ("mask", "lhs", "rhs", "tmp"), _sel_type, n_tiles=3,
          effects={0: READ, 1: READ, 2: READ, 3: READWRITE}, pto="pto.tsel")
vector_op("tile.sels", ("mask", "src", "tmp", "scalar"), _sels_type, n_tiles=2,
          effects={0: READ, 1: READ, 2: READWRITE}, pto="pto.tsels")


# ---------------------------------------------------------------------------- cube (matrix) ops
def accumulator_dtype(lhs: DataType) -> DataType:
    """The cube unit accumulates float inputs in FP32 and integer inputs in INT32."""
    return FP32 if lhs.is_float() else INT32


def _product(name: str, lhs_arg, rhs_arg) -> tuple:
    a = expect_tile(name, "lhs", lhs_arg)
    b = expect_tile(name, "rhs", rhs_arg)
    if a.rank != 2 or b.rank != 2:
        raise TypeCheckError(f"{name}: lhs and rhs must be 2-D tiles")
    same_dtype(name, a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
    if not dims_equal((a.shape[1],), (b.shape[0],)):
        raise TypeCheckError(f"{name}: inner dimensions differ: lhs {fmt_shape(a.shape)} × rhs {fmt_shape(b.shape)}",
                             hint="lhs is [M, K] and rhs is [K, N]")
    # Mat is accepted too: ConvertTensorToTileOps hands the cube its operands in Mat and
    # InferTileMemorySpace adds the Mat → Left / Right moves (seed 003, MatmulSlice).
    for arg, t, space in (("lhs", a, MemorySpace.Left), ("rhs", b, MemorySpace.Right)):
        if t.memory_space is not None and t.memory_space not in (space, MemorySpace.Mat, MemorySpace.Vec):
            raise TypeCheckError(f"{name}: argument '{arg}' must be in {space.name}, got {t.memory_space.name}",
                                 hint=f"pl.move(x, target_memory=pl.Mem.{space.name}) first")
    return (a.shape[0], b.shape[1]), (a.valid_shape[0], b.valid_shape[1]), accumulator_dtype(a.dtype)


def _acc_tile(shape, valid, dtype) -> TileType:
    return TileType(shape, dtype, memory_space=MemorySpace.Acc).with_valid_shape(valid)


def _matmul_type(args, kw):
    return _acc_tile(*_product("tile.matmul", args[0], args[1]))


def _matmul_acc_type(args, kw):
    acc = expect_tile("tile.matmul_acc", "acc", args[0])
    shape, valid, dtype = _product("tile.matmul_acc", args[1], args[2])
    if acc.dtype is not dtype:
        raise TypeCheckError(f"tile.matmul_acc: argument 'acc' must be {dtype.name} (the accumulator of "
                             f"{args[1].type.dtype.name} inputs), got {acc.dtype.name}")
    same_shape("tile.matmul_acc", acc.shape, shape, "acc and the product")
    if len(args) > 3:
        expect_scalar("tile.matmul_acc", "init_cond", args[3])
    return _acc_tile(acc.shape, acc.valid_shape, dtype)


def _matmul_bias_type(args, kw):
    shape, valid, dtype = _product("tile.matmul_bias", args[0], args[1])
    bias = expect_tile("tile.matmul_bias", "bias", args[2])
    # The 1 must be an IR ConstInt: dims_equal treats a plain int as unknown and could never reject a bad bias.
    if not dims_equal(bias.shape, (ConstInt(1, INDEX), shape[1])):
        raise TypeCheckError(f"tile.matmul_bias: argument 'bias' must be [1, N] = {fmt_shape((1, shape[1]))}, "
                             f"got {fmt_shape(bias.shape)}")
    return _acc_tile(shape, valid, dtype)


_CUBE_IN = {1: (MemorySpace.Left,), 2: (MemorySpace.Right,)}
register_op(OpDef("tile.matmul", args=("lhs", "rhs"), deduce=_matmul_type, affinity=CUBE,
                  output_memory=MemorySpace.Acc, input_memory={0: (MemorySpace.Left,), 1: (MemorySpace.Right,)},
                  effects={0: READ, 1: READ}, pto="pto.tmatmul", description="Left [M,K] × Right [K,N] → Acc [M,N]"))
register_op(OpDef("tile.matmul_acc", args=("acc", "lhs", "rhs", "init_cond"), min_args=3, deduce=_matmul_acc_type,
                  affinity=CUBE, output_memory=MemorySpace.Acc, input_memory={0: (MemorySpace.Acc,), **_CUBE_IN},
                  effects={0: READWRITE, 1: READ, 2: READ}, reuses_input=0,
                  description="acc += lhs × rhs (in place); with init_cond true, acc = lhs × rhs"))
register_op(OpDef("tile.matmul_bias", args=("lhs", "rhs", "bias"), deduce=_matmul_bias_type, affinity=CUBE,
                  output_memory=MemorySpace.Acc,
                  input_memory={0: (MemorySpace.Left,), 1: (MemorySpace.Right,), 2: (MemorySpace.Bias,)},
                  effects={0: READ, 1: READ, 2: READ}, pto="pto.tmatmul.bias",
                  description="lhs × rhs + bias (bias [1,N] broadcast)"))
