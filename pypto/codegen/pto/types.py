"""Spelling of IR types in the PTO dialect: element types, tile buffers, tensor views.

    mlir_dtype(FP32)                  -> "f32"
    tile_buf_type(tile_type)          -> "!pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=64, v_row=64, ...>"
    tensor_view_type(tensor_type)     -> "!pto.tensor_view<?x?xf32>"
    partition_view_type([64, 64], FP32) -> "!pto.partition_tensor_view<64x64xf32>"

Pure functions of the type: no state, no analysis (pypto/codegen/pto is a 1:1 translation).
"""

from __future__ import annotations

from pypto.errors import InternalError, UnsupportedError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import CompactMode, MemorySpace, PadValue, TileLayout
from pypto.ir.expr import ConstInt
from pypto.ir.types import ScalarType, TensorType, TileType, TileView

_DTYPES = {
    "BOOL": "i1", "INT4": "i4", "UINT4": "ui4", "INT8": "i8", "UINT8": "ui8", "INT16": "i16", "UINT16": "ui16",
    "INT32": "i32", "UINT32": "ui32", "INT64": "i64", "UINT64": "ui64", "FP16": "f16", "BF16": "bf16",
    "FP32": "f32", "FP64": "f64", "FP8E4M3FN": "f8E4M3FN", "FP8E5M2": "f8E5M2", "FP8E8M0": "f8E8M0FNU",
    "FP4": "f4E2M1FN", "INDEX": "index",
}

# PTO address-space names (pto.alloc_tile `loc=`, #pto.address_space<...>).
_SPACES = {
    MemorySpace.DDR: "gm", MemorySpace.Vec: "vec", MemorySpace.Mat: "mat", MemorySpace.Left: "left",
    MemorySpace.Right: "right", MemorySpace.Acc: "acc", MemorySpace.Bias: "bias",
    MemorySpace.LeftScale: "scaling_left", MemorySpace.RightScale: "scaling_right",
}


def mlir_dtype(dtype: DataType) -> str:
    name = _DTYPES.get(dtype.name)
    if name is None:
        raise UnsupportedError(f"PTO codegen: element type {dtype.name} has no PTO spelling")
    return name


def scalar_type(t) -> str:
    if not isinstance(t, ScalarType):
        raise InternalError(f"PTO codegen: expected a scalar type, got {type(t).__name__}")
    return mlir_dtype(t.dtype)


def address_space(space: MemorySpace) -> str:
    name = _SPACES.get(space)
    if name is None:
        raise UnsupportedError(f"PTO codegen: memory space {space.name} has no PTO address space")
    return name


def static_int(e, what: str) -> int:
    if e is None:
        raise UnsupportedError(f"PTO codegen: {what} must be a compile-time constant for pto.alloc_tile")
    if isinstance(e, int):
        return e
    if isinstance(e, ConstInt):
        return e.value
    raise UnsupportedError(f"PTO codegen: {what} must be a compile-time constant for pto.alloc_tile, got {e!r}",
                           getattr(e, "span", None))


def _rows_cols(shape) -> tuple:
    """A tile buffer is 2-D: a 1-D tile is one row; a rank > 2 tile (an N-D load / store that
    FlattenTileNdTo2D reshapes around) is [prod(leading dims), last dim]."""
    if len(shape) == 1:
        return 1, shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    if not shape:
        raise UnsupportedError("PTO codegen: a rank-0 tile has no pto.tile_buf")
    rows = 1
    for d in shape[:-1]:
        if isinstance(d, int):
            rows *= d
        elif isinstance(d, ConstInt):
            rows *= d.value
        else:
            return None, shape[-1]                 # dynamic: spelled "?" (or rejected for a physical shape)
    return rows, shape[-1]


def effective_view(t: TileType) -> TileView:
    return t.effective_view


def _valid_dim(e) -> str:
    if e is None:
        return "?"
    if isinstance(e, int):
        return str(e)
    return str(e.value) if isinstance(e, ConstInt) else "?"


def tile_buf_type(t: TileType) -> str:
    """`!pto.tile_buf<...>` of a tile: space, dtype, physical rows / cols, valid rows / cols and view."""
    if not isinstance(t, TileType):
        raise InternalError(f"PTO codegen: expected a tile type, got {type(t).__name__}")
    if t.memory_space is None:
        raise InternalError("PTO codegen: a tile reached codegen without a memory space")
    rows, cols = (static_int(d, "a tile's physical shape") for d in _rows_cols(t.shape))
    v_row, v_col = _rows_cols(t.valid_shape)
    view = effective_view(t)
    text = (f"!pto.tile_buf<loc={address_space(t.memory_space)}, dtype={mlir_dtype(t.dtype)}, rows={rows}, "
            f"cols={cols}, v_row={_valid_dim(v_row)}, v_col={_valid_dim(v_col)}, blayout={view.blayout.name}, "
            f"slayout={view.slayout.name}, fractal={view.fractal}, pad={_pad_code(view.pad)}")
    if view.compact is not CompactMode.null:
        text += f", compact={view.compact.value}"
    return text + ">"


def window_type(base: TileType, shape) -> TileType:
    """The type of a `pto.subview` window of `base`: its own shape, the base's space, dtype and layout
    (ptoas requires a subview to keep blayout / slayout / fractal / pad / compact of its source)."""
    view = base.tile_view.replace(valid_shape=()) if base.tile_view is not None else None
    return TileType(shape, base.dtype, tile_view=view, memory_space=base.memory_space)


def _pad_code(pad: PadValue) -> int:
    return pad.value


def tensor_view_type(t: TensorType) -> str:
    return "!pto.tensor_view<" + "x".join("?" for _ in t.shape) + f"x{mlir_dtype(t.dtype)}>"


def partition_view_type(sizes, dtype: DataType) -> str:
    dims = "x".join(str(s.value) if isinstance(s, ConstInt) else "?" for s in sizes)
    return f"!pto.partition_tensor_view<{dims}x{mlir_dtype(dtype)}>"


def ptr_type(t: TensorType) -> str:
    return f"!pto.ptr<{mlir_dtype(t.dtype)}>"
