"""MX (microscaling) quantization tile ops, a5 only (seed 001, "Algorithm (tile.tquant_mx rule)").

    data, scale = pl.tile.tquant_mx(t, group_axis=1)     # t [M, K] → FP8E4M3FN [M, K], FP8E8M0 [M, K/32]

OCP MX: every group of 32 consecutive elements shares one power-of-two scale (an E8M0
exponent byte); the elements are stored as FP8 E4M3. `group_axis` follows PTOAS grpAxis:
1 is the A side — src [M, K], groups along K, scale [M, K/32]; 0 is the B side — src [N, K]
is quantized as its transpose [K, N], groups along K (axis 0 of the result), scale [K/32, N]
(column-major view).

tile.tquant_mx is composite: LowerCompositeOps rewrites it into the value-returning
primitives declared here —
  tile.tquant_mx_raw(src, max, scaling)   → (INT8 data bytes [rows, cols], UINT8 exponents):
      exponents flat [1, groups] for axis 1, [rows/32, cols] (DN) for axis 0; `max` / `scaling`
      are write-only workspaces (one element per group, the source dtype) the instruction needs;
  tile.tmov_x2zz(exp, tmp)                → the exponents in ZZ order: [M, K/32] for axis 1,
      [cols, rows/32] (then transpose_view'ed) for axis 0; `tmp` is scratch;
  tile.reinterpret_view(x, dtype)         → the same bytes seen as another dtype of equal width
      (the FP8 data and E8M0 scale aliases of the raw bytes).
The simulator keeps tiles logically row-major, so ZZ / DN are orders of the logical matrix here,
not fractal byte layouts.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import BF16, FP8E4M3FN, FP8E8M0, FP16, FP32, INT8, UINT8, DataType
from pypto.ir.enums import MemorySpace, TileLayout
from pypto.ir.ops.common import expect_tile, fmt_shape, is_full
from pypto.ir.ops.registry import READ, VECTOR, WRITE, Kwarg, OpDef, register_op
from pypto.ir.types import TileType, TileView, TupleType, static_dims
from pypto.ir.ops.reinterpret_shape import reinterpreted_shape

MX_GROUP = 32                   # elements per shared exponent (OCP MX block size)
MX_SCALE_ROWS = 16              # axis-1 M granularity (the scale's ZZ fractal rows)
SOURCE_DTYPES = (FP16, BF16, FP32)


def _tile(shape, dtype: DataType, blayout=TileLayout.row_major, slayout=TileLayout.none_box) -> TileType:
    return TileType(list(shape), dtype, tile_view=TileView(blayout=blayout, slayout=slayout),
                    memory_space=MemorySpace.Vec)


def _group_axis(name: str, kw) -> int:
    axis = kw["group_axis"]
    if axis not in (0, 1):
        raise TypeCheckError(f"{name}: group_axis must be 0 or 1, got {axis}",
                             hint="1 groups along the columns of an [M, K] A operand, 0 quantizes an [N, K] B operand")
    return axis


def _source(name: str, arg, kw) -> tuple[int, int]:
    """The static (rows, cols) of a fully valid 2-D FP16 / BF16 / FP32 source."""
    t = expect_tile(name, "src", arg)
    dims = static_dims(t.shape)
    if t.rank != 2 or dims is None:
        raise TypeCheckError(f"{name}: argument 'src' must be a 2-D tile with static shape, got {fmt_shape(t.shape)}")
    if not is_full(t.shape, t.valid_shape):
        raise TypeCheckError(f"{name}: argument 'src' must be fully valid (valid_shape = shape)",
                             hint="MX quantization has no partial form; pl.fillpad the tile first")
    if t.dtype not in SOURCE_DTYPES:
        raise TypeCheckError(f"{name}: argument 'src' must be FP16, BF16 or FP32, got {t.dtype.name}")
    if kw["dtype"] is not FP8E4M3FN:
        raise TypeCheckError(f"{name}: dtype must be FP8E4M3FN (MXFP8), got {kw['dtype'].name}")
    return dims[0], dims[1]


def _public_type(args, kw):
    name = "tile.tquant_mx"
    axis = _group_axis(name, kw)
    rows, cols = _source(name, args[0], kw)
    if cols % 64:
        raise TypeCheckError(f"{name}: K (the column count) must be a multiple of 64, got {cols}")
    if axis == 1 and rows % MX_SCALE_ROWS:
        raise TypeCheckError(f"{name}: M must be a multiple of {MX_SCALE_ROWS} for group_axis=1, got {rows}")
    if axis == 0 and rows % MX_GROUP:
        raise TypeCheckError(f"{name}: N must be a multiple of {MX_GROUP} for group_axis=0, got {rows}")
    if axis == 1:
        return TupleType([_tile((rows, cols), FP8E4M3FN),
                          _tile((rows, cols // MX_GROUP), FP8E8M0, slayout=TileLayout.row_major)])
    return TupleType([_tile((cols, rows), FP8E4M3FN),
                      _tile((cols // MX_GROUP, rows), FP8E8M0, TileLayout.col_major, TileLayout.col_major)])


def raw_exp_shape(rows: int, cols: int, axis: int) -> tuple[int, int]:
    """Exponent bytes of tquant_mx_raw: flat [1, groups] along the columns, DN [rows/32, cols] along the rows."""
    return (1, rows * cols // MX_GROUP) if axis == 1 else (rows // MX_GROUP, cols)


def _raw_type(args, kw):
    name = "tile.tquant_mx_raw"
    axis = _group_axis(name, kw)
    rows, cols = _source(name, args[0], kw)
    if (cols if axis == 1 else rows) % MX_GROUP:
        raise TypeCheckError(f"{name}: the grouped dimension must be a multiple of {MX_GROUP}")
    groups = rows * cols // MX_GROUP
    src_dtype = args[0].type.dtype
    for arg, e in (("max", args[1]), ("scaling", args[2])):
        w = expect_tile(name, arg, e)
        n = 1
        for d in static_dims(w.valid_shape) or (0,):
            n *= d
        if w.dtype is not src_dtype or n != groups:
            raise TypeCheckError(f"{name}: workspace '{arg}' must be a {src_dtype.name} tile of {groups} valid "
                                 f"elements (one per group), got {fmt_shape(w.valid_shape)} {w.dtype.name}")
    return TupleType([_tile((rows, cols), INT8), _tile(raw_exp_shape(rows, cols, axis), UINT8)])


def x2zz_tmp_bytes(rows: int, groups: int) -> int:
    """Axis-1 tmov_x2zz scratch: 64 + ceil(rows/16)·groups bytes, rounded up to the 32-byte block."""
    need = 64 + -(-rows // MX_SCALE_ROWS) * groups
    return -(-need // 32) * 32


def _x2zz_type(args, kw):
    name = "tile.tmov_x2zz"
    axis = _group_axis(name, kw)
    src = expect_tile(name, "src", args[0])
    tmp = expect_tile(name, "tmp", args[1])
    if src.dtype is not UINT8 or tmp.dtype is not UINT8:
        raise TypeCheckError(f"{name}: src and tmp must be UINT8 exponent tiles, got {src.dtype.name} / {tmp.dtype.name}")
    dims = static_dims(src.shape)
    if src.rank != 2 or dims is None:
        raise TypeCheckError(f"{name}: argument 'src' must be a static 2-D tile")
    if axis == 1:
        rows, cols = kw["dst_rows"], kw["dst_cols"]
        if rows * cols != dims[0] * dims[1]:
            raise TypeCheckError(f"{name}: dst [{rows}, {cols}] does not hold the {dims[0] * dims[1]} exponents of src")
        shape = (rows, cols)
    else:
        shape = (dims[1], dims[0])          # DN [groups, cols] → ZZ [cols, groups]
    return _tile(shape, UINT8, slayout=TileLayout.row_major)


def _reinterpret_type(args, kw):
    name = "tile.reinterpret_view"
    t = expect_tile(name, "x", args[0])
    partial = t.valid_shape if t.tile_view is not None and t.tile_view.valid_shape else None
    shape, changed = reinterpreted_shape(name, t.shape, partial, t.dtype.bits, kw["dtype"].bits, kw["shape"])
    view = t.tile_view
    if changed and view is not None:
        view = view.replace(valid_shape=())
    return TileType(shape, kw["dtype"], tile_view=view, memory_space=t.memory_space)


_MX_KW = {"dtype": Kwarg(DataType, FP8E4M3FN), "group_axis": Kwarg(int)}
register_op(OpDef("tile.tquant_mx", args=("src",), kwargs=dict(_MX_KW), deduce=_public_type, affinity=VECTOR,
                  effects={0: READ}, description="MX block-32 quantization → (FP8E4M3FN data, FP8E8M0 scale); "
                                                 "composite, a5 only"))
register_op(OpDef("tile.tquant_mx_raw", args=("src", "max", "scaling"), kwargs=dict(_MX_KW), deduce=_raw_type,
                  affinity=VECTOR, effects={0: READ, 1: WRITE, 2: WRITE},
                  description="TQUANT: (INT8 data bytes, UINT8 exponents); max / scaling are write-only workspaces"))
register_op(OpDef("tile.tmov_x2zz", args=("src", "tmp"),
                  kwargs={"group_axis": Kwarg(int), "dst_rows": Kwarg(int, 0), "dst_cols": Kwarg(int, 0)},
                  deduce=_x2zz_type, affinity=VECTOR, output_memory=MemorySpace.Vec, effects={0: READ, 1: WRITE},
                  description="exponent bytes → ZZ order (TMovDnTo2Zz for axis 0)"))
register_op(OpDef("tile.reinterpret_view", args=("x",), kwargs={"dtype": Kwarg(DataType), "shape": Kwarg(object, None)},
                  deduce=_reinterpret_type,
                  output_memory="inherit", effects={0: READ},
                  description="the same bytes as another dtype (zero-copy on hardware); a width change rescales "
                              "the last dim, or shape= gives a byte-equivalent shape"))

__all__ = ["MX_GROUP", "raw_exp_shape", "x2zz_tmp_bytes"]
