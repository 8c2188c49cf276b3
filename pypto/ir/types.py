"""IR types: scalars, GM tensors, on-chip tiles, tuples, and the memory metadata they carry.

Shapes are tuples of Exprs (ConstInt INDEX for static dims, a Var for `pl.dynamic` dims).
Constructors accept plain ints and convert them, so `TensorType([64, 64], FP32)` works.
A TensorView equal to the default is stored as None, so "no view" and "default view" compare
equal. A TileView equal to its memory space's implicit view (implicit_tile_view: NZ in Mat / Left,
ZN-boxed Right, the 1024-fractal Acc, plain row-major elsewhere) is stored as None the same way.
"""

from __future__ import annotations

from typing import Optional, Sequence

from pypto.ir.dtypes import INDEX, INT64, TASK_ID, DataType
from pypto.ir.enums import CompactMode, MemorySpace, PadValue, TensorLayout, TileLayout
from pypto.ir.node import IGNORE, USUAL, IRTuple, Node, set_field


# Shapes and MakeTuple elements are IRTuples like every sequence field of a node: a tuple that also
# equals the list of the same items (pypto/ir/node.py).
Dims = IRTuple


def to_expr_tuple(values) -> tuple:
    """Convert a sequence of ints / Exprs to a tuple of Exprs (ints become ConstInt INDEX)."""
    ConstInt, Expr = _expr.ConstInt, _expr.Expr
    if values is None:
        return Dims()
    out = []
    for v in values:
        if isinstance(v, Expr):
            out.append(v)
        elif isinstance(v, bool):
            raise TypeError(f"shape entries must be integers, got {v!r}")
        elif isinstance(v, int):
            out.append(ConstInt(v, INDEX))
        else:
            raise TypeError(f"shape entries must be integers or IR expressions, got {type(v).__name__}")
    return Dims(out)


def static_dims(shape) -> Optional[tuple[int, ...]]:
    """The shape as ints, or None when some dim is not a compile-time constant."""
    ConstInt = _expr.ConstInt
    dims = []
    for d in shape:
        if not isinstance(d, ConstInt):
            return None
        dims.append(d.value)
    return tuple(dims)


def _same_static(a, b) -> bool:
    sa, sb = static_dims(a), static_dims(b)
    return sa is not None and sa == sb


class Type(Node):
    __slots__ = ()


class UnknownType(Type):
    """The result type of side-effect-only ops."""
    __slots__ = ()

    def __init__(self):
        set_field(self, "span", None)


class PtrType(Type):
    """The opaque handle of an on-chip allocation (the base of a MemRef)."""
    __slots__ = ()

    def __init__(self):
        set_field(self, "span", None)


class ScalarType(Type):
    __slots__ = ("dtype",)
    FIELDS = (("dtype", USUAL),)

    def __init__(self, dtype: DataType):
        set_field(self, "dtype", dtype)
        set_field(self, "span", None)


class CommCtxType(ScalarType):
    """`pld.CommCtx`: a kernel's handle to the communication context of a window (rank, world size, the
    peers' window bases). MaterializeDistTensorCtx adds one such parameter per DistributedTensor parameter;
    as a value it is an INT64 scalar (a device pointer on hardware)."""
    __slots__ = ()

    def __init__(self):
        self._set(dtype=INT64, span=None)


class TaskIdArrayType(ScalarType):
    """`pl.Array[n, pl.TASK_ID]`: a fixed-size array of TaskIds in an orchestration function (fan-in of a
    loop's producers, `deps=[tids]`). A host-side value like a scalar, so no pass treats it as a buffer."""
    __slots__ = ("extent",)
    FIELDS = (("dtype", USUAL), ("extent", USUAL))

    def __init__(self, extent: int):
        self._set(dtype=TASK_ID, extent=int(extent), span=None)


class TupleType(Type):
    __slots__ = ("types",)
    FIELDS = (("types", USUAL),)

    def __init__(self, types: Sequence[Type]):
        self._set(types=tuple(types), span=None)


class MemRef(Node):
    """Where a buffer lives: a base allocation (a Ptr Var from tile.alloc) plus a byte offset.

    Two MemRefs alias exactly when they share the base Var.
    """
    __slots__ = ("base", "byte_offset", "size")
    FIELDS = (("base", USUAL), ("byte_offset", USUAL), ("size", USUAL))

    def __init__(self, base, byte_offset=0, size: int = 0):
        if not isinstance(byte_offset, _expr.Expr):
            byte_offset = _expr.ConstInt(int(byte_offset), INDEX)
        set_field(self, "base", base)
        set_field(self, "byte_offset", byte_offset)
        set_field(self, "size", int(size))
        set_field(self, "span", None)


class TensorView(Node):
    __slots__ = ("stride", "layout", "valid_shape", "pad")
    FIELDS = (("stride", USUAL), ("layout", USUAL), ("valid_shape", USUAL), ("pad", USUAL))

    def __init__(self, stride=(), layout: TensorLayout = TensorLayout.ND, valid_shape=(), pad: PadValue = PadValue.null):
        self._set(stride=to_expr_tuple(stride), layout=layout, valid_shape=to_expr_tuple(valid_shape), pad=pad, span=None)

    def is_default(self) -> bool:
        return not self.stride and self.layout is TensorLayout.ND and not self.valid_shape and self.pad is PadValue.null


class TileView(Node):
    __slots__ = ("valid_shape", "stride", "start_offset", "blayout", "slayout", "fractal", "pad", "compact")
    FIELDS = tuple((n, USUAL) for n in ("valid_shape", "stride", "start_offset", "blayout", "slayout",
                                        "fractal", "pad", "compact"))

    def __init__(self, valid_shape=(), stride=(), start_offset=None, blayout: TileLayout = TileLayout.row_major,
                 slayout: TileLayout = TileLayout.none_box, fractal: int = 512, pad: PadValue = PadValue.null,
                 compact: CompactMode = CompactMode.null):
        self._set(valid_shape=to_expr_tuple(valid_shape), stride=to_expr_tuple(stride), start_offset=start_offset,
                  blayout=blayout, slayout=slayout, fractal=int(fractal), pad=pad, compact=compact, span=None)

    def is_default(self) -> bool:
        return (not self.valid_shape and not self.stride and self.start_offset is None
                and self.blayout is TileLayout.row_major and self.slayout is TileLayout.none_box
                and self.fractal == 512 and self.pad is PadValue.null and self.compact is CompactMode.null)


class ShapedType(Type):
    """Common part of TensorType and TileType."""
    __slots__ = ("shape", "dtype", "memref")

    @property
    def rank(self) -> int:
        return len(self.shape)

    def static_shape(self) -> Optional[tuple[int, ...]]:
        return static_dims(self.shape)

    def nbytes(self) -> Optional[int]:
        dims = self.static_shape()
        if dims is None:
            return None
        n = 1
        for d in dims:
            n *= d
        return (n * self.dtype.bits + 7) // 8


class TensorType(ShapedType):
    """A tensor in global memory (DDR / GM)."""
    __slots__ = ("tensor_view",)
    FIELDS = (("shape", USUAL), ("dtype", USUAL), ("memref", USUAL), ("tensor_view", USUAL))

    def __init__(self, shape, dtype: DataType, memref: Optional[MemRef] = None, tensor_view: Optional[TensorView] = None):
        if tensor_view is not None and tensor_view.is_default():
            tensor_view = None
        self._set(shape=to_expr_tuple(shape), dtype=dtype, memref=memref, tensor_view=tensor_view, span=None)

    @property
    def valid_shape(self) -> tuple:
        if self.tensor_view is not None and self.tensor_view.valid_shape:
            return self.tensor_view.valid_shape
        return self.shape


class DistributedTensorType(TensorType):
    """A window-bound slice of a per-rank communication window (distinct kind from TensorType).

    `window_buffer` is the buffer (the `pld.alloc_window_buffer` value) a `pld.window` slice was
    cut from, kept so tools can tell which allocation a slice belongs to; it is None for kernel
    parameter annotations (`pld.DistributedTensor[[N], pl.FP32]`). It is not printed, and equality
    ignores it (a window's identity is its host binding, which the printed IR does not carry)."""
    __slots__ = ("window_buffer",)
    FIELDS = TensorType.FIELDS + (("window_buffer", IGNORE),)

    def __init__(self, shape, dtype: DataType, memref: Optional[MemRef] = None,
                 tensor_view: Optional[TensorView] = None, window_buffer=None):
        super().__init__(shape, dtype, memref, tensor_view)
        object.__setattr__(self, "window_buffer", window_buffer)


# The layout each cube-side memory space implies when a tile type spells none (the space's
# native fractal); every other space (Vec, DDR, unresolved) implies the plain row-major TileView().
_IMPLICIT_LAYOUTS = {
    MemorySpace.Mat: (TileLayout.col_major, TileLayout.row_major, 512),
    MemorySpace.Left: (TileLayout.col_major, TileLayout.row_major, 512),
    MemorySpace.Right: (TileLayout.row_major, TileLayout.col_major, 512),
    MemorySpace.Acc: (TileLayout.col_major, TileLayout.row_major, 1024),
}


def implicit_tile_view(memory_space: Optional[MemorySpace]) -> "TileView":
    """The view a tile in `memory_space` has when its type stores none."""
    layout = _IMPLICIT_LAYOUTS.get(memory_space)
    if layout is None:
        return TileView()
    return TileView(blayout=layout[0], slayout=layout[1], fractal=layout[2])


def _is_implicit(view: "TileView", memory_space) -> bool:
    return (not view.valid_shape and not view.stride and view.start_offset is None
            and view.pad is PadValue.null and view.compact is CompactMode.null
            and (view.blayout, view.slayout, view.fractal) == _IMPLICIT_LAYOUTS.get(
                memory_space, (TileLayout.row_major, TileLayout.none_box, 512)))


_VIEW_NEUTRAL = frozenset({"memref", "dtype", "span"})     # TileType fields its view canonicalization ignores


class TileType(ShapedType):
    """An on-chip tile: shape, dtype, memory space and view (incl. valid_shape)."""
    __slots__ = ("tile_view", "memory_space")
    FIELDS = (("shape", USUAL), ("dtype", USUAL), ("memref", USUAL), ("tile_view", USUAL), ("memory_space", USUAL))

    def __init__(self, shape, dtype: DataType, memref: Optional[MemRef] = None, tile_view: Optional[TileView] = None,
                 memory_space: Optional[MemorySpace] = None):
        shape = to_expr_tuple(shape)
        if tile_view is not None:
            if tile_view.valid_shape and _same_static(tile_view.valid_shape, shape):
                tile_view = tile_view.replace(valid_shape=())
            if _is_implicit(tile_view, memory_space):
                tile_view = None
        self._set(shape=shape, dtype=dtype, memref=memref, tile_view=tile_view, memory_space=memory_space, span=None)

    def replace(self, **changes) -> "TileType":
        """A copy with some fields changed, its view re-canonicalized against the (new) memory space."""
        new = super().replace(**changes)
        if new is self or _VIEW_NEUTRAL.issuperset(changes):
            return new                    # the view's canonical form depends on shape, view and space only
        return TileType(new.shape, new.dtype, new.memref, new.tile_view, new.memory_space)

    @property
    def effective_view(self) -> TileView:
        """The stored view, or the memory space's implicit one when none is stored."""
        return self.tile_view if self.tile_view is not None else implicit_tile_view(self.memory_space)

    @property
    def valid_shape(self) -> tuple:
        if self.tile_view is not None and self.tile_view.valid_shape:
            return self.tile_view.valid_shape
        return self.shape

    def with_valid_shape(self, valid_shape) -> "TileType":
        view = self.effective_view
        return TileType(self.shape, self.dtype, self.memref, view.replace(valid_shape=to_expr_tuple(valid_shape)),
                        self.memory_space)


def is_tensor(t) -> bool:
    return isinstance(t, TensorType)


def is_tile(t) -> bool:
    return isinstance(t, TileType)


def is_scalar(t) -> bool:
    return isinstance(t, ScalarType)


# Expressions (shapes, offsets) are built from pypto.ir.expr, which imports this module: it is bound
# here, once both exist, rather than imported inside the functions above (an import statement per
# call costs more than the rest of static_dims).
import pypto.ir.expr as _expr  # noqa: E402
