"""Type annotations of the DSL: `pl.Tensor[[64, 64], pl.FP32]`, `pl.Tile[...]`, `pl.Scalar[...]`,
`pl.Out[...]` / `pl.InOut[...]`, `pl.Tuple[...]`, `pl.Ptr`, plus the view / memref / dynamic-dim
helpers that appear inside them.

Subscripting an annotation class gives the IR type (`pl.Tensor[[64], pl.FP32]` is a
`TensorType`), so type aliases written at module level work; the parser calls the same
builders with items it evaluated itself (which may hold symbolic dims).
"""

from __future__ import annotations

from typing import Any, Optional

from pypto.call_site import called_from_user_code, user_call_span
from pypto.ir.dtypes import INDEX, DataType
from pypto.ir.enums import MemorySpace, ParamDirection, TensorLayout
from pypto.ir.expr import ConstInt, Expr, Var, const as _ir_const
from pypto.ir.types import (DistributedTensorType, MemRef as _IrMemRef, PtrType, ScalarType, TensorType,
                            TensorView as _IrTensorView, TileType, TileView as _IrTileView, TupleType, Type,
                            UnknownType)
from pypto.language.parser.diagnostics import ParserTypeError


def _items(item) -> tuple:
    return item if isinstance(item, tuple) else (item,)


def _shape(kind: str, value) -> list:
    if isinstance(value, (Var, Expr)) and not isinstance(value, ConstInt):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ParserTypeError(f"{kind} annotation: the shape must be a list like [64, 128], got {value!r}",
                              hint=f"write pl.{kind}[[rows, cols], pl.FP32]")
    dims = []
    for d in value:
        if isinstance(d, bool) or not isinstance(d, (int, Expr)):
            raise ParserTypeError(f"{kind} annotation: shape entries must be integers or pl.dynamic dims, got {d!r}")
        dims.append(d)
    return dims


def _dtype(kind: str, value) -> DataType:
    if not isinstance(value, DataType):
        raise ParserTypeError(f"{kind} annotation: expected a dtype such as pl.FP32, got {value!r}")
    return value


def tensor_type(item, *, distributed: bool = False) -> TensorType:
    """Build `pl.Tensor[[shape], dtype(, layout | TensorView | MemRef)...]`."""
    kind = "DistributedTensor" if distributed else "Tensor"
    items = _items(item)
    if len(items) < 2:
        raise ParserTypeError(f"{kind} annotation needs a shape and a dtype", hint=f"write pl.{kind}[[64, 64], pl.FP32]")
    shape, dtype = _shape(kind, items[0]), _dtype(kind, items[1])
    view, memref = None, None
    for extra in items[2:]:
        if isinstance(extra, TensorLayout):
            view = _IrTensorView(layout=extra)
        elif isinstance(extra, _IrTensorView):
            view = extra
        elif isinstance(extra, _IrMemRef):
            memref = extra
        elif extra.__class__.__name__ == "MemRefDecl":     # by name: a DDR base (bound nowhere)
            memref = extra.resolve(TensorType(shape, dtype))
        else:
            raise ParserTypeError(f"{kind} annotation: unexpected item {extra!r}",
                                  hint="after shape and dtype a Tensor takes a layout, a pl.TensorView(...) or a pl.MemRef(...)")
    cls = DistributedTensorType if distributed else TensorType
    return cls(shape, dtype, memref=memref, tensor_view=view)


def tile_type(item) -> TileType:
    """Build `pl.Tile[[shape], dtype(, MemRef)(, MemorySpace)(, TileView)]`."""
    items = _items(item)
    if len(items) < 2:
        raise ParserTypeError("Tile annotation needs a shape and a dtype", hint="write pl.Tile[[64, 64], pl.FP32]")
    shape, dtype = _shape("Tile", items[0]), _dtype("Tile", items[1])
    memref = view = space = None
    from pypto.language.memref_decl import MemRefDecl
    for extra in items[2:]:
        if isinstance(extra, MemRefDecl):
            memref = extra
        elif isinstance(extra, _IrMemRef):
            memref = extra
        elif isinstance(extra, MemorySpace):
            space = extra
        elif isinstance(extra, _IrTileView):
            view = extra
        else:
            raise ParserTypeError(f"Tile annotation: unexpected item {extra!r}",
                                  hint="after shape and dtype a Tile takes pl.MemRef(...), a pl.Mem space and a pl.TileView(...)")
    if isinstance(memref, MemRefDecl):
        memref = memref.resolve(TileType(shape, dtype, memory_space=space))
    return TileType(shape, dtype, memref=memref, tile_view=view, memory_space=space)


def scalar_type(item) -> ScalarType:
    return ScalarType(_dtype("Scalar", item))


def tuple_type(item) -> TupleType:
    types = [ScalarType(t) if isinstance(t, DataType) else t for t in _items(item)]
    for t in types:
        if not isinstance(t, Type):
            raise ParserTypeError(f"Tuple annotation: element {t!r} is not a type")
    return TupleType(types)


def _built_for_the_user(build, item):
    """The type `build(item)`; a mistake in it is located at the user's line when Python itself evaluated the
    annotation (a module-level alias, a method's annotations at class definition), which pypto's parser,
    evaluating annotations with their spans, would otherwise never see."""
    try:
        return build(item)
    except ParserTypeError as e:
        if called_from_user_code(2):
            e.with_span(user_call_span())
        raise


class Tensor:
    """`pl.Tensor[[shape], dtype, ...]`: a tensor in global memory."""
    def __class_getitem__(cls, item):
        return _built_for_the_user(tensor_type, item)


class Tile:
    """`pl.Tile[[shape], dtype, ...]`: an on-chip tile."""
    def __class_getitem__(cls, item):
        return _built_for_the_user(tile_type, item)


class Scalar:
    """`pl.Scalar[dtype]`: a scalar value."""
    def __class_getitem__(cls, item):
        return _built_for_the_user(scalar_type, item)


class Array:
    """`pl.Array[n, pl.TASK_ID]`: an orchestration array of TaskIds (`pl.array.create(n, pl.TASK_ID)`);
    `pl.Array[n, dtype]` of another dtype is an on-core array, a 1-D Vec tile."""
    def __class_getitem__(cls, item):
        from pypto.ir.dtypes import TASK_ID
        from pypto.ir.enums import MemorySpace
        from pypto.ir.types import TaskIdArrayType
        if not isinstance(item, tuple) or len(item) != 2 or not isinstance(item[0], int):
            raise ParserTypeError("pl.Array takes [extent, dtype], e.g. pl.Array[4, pl.TASK_ID]")
        dtype = _dtype("Array", item[1])
        if dtype is TASK_ID:
            return TaskIdArrayType(item[0])
        return TileType([item[0]], dtype, memory_space=MemorySpace.Vec)


class Tuple:
    """`pl.Tuple[T1, T2]`: a tuple of values (multi-result calls, multi-value returns)."""
    def __class_getitem__(cls, item):
        return tuple_type(item)


class Out:
    """`pl.Out[T]`: a parameter the function writes without reading (direction Out)."""
    direction = ParamDirection.Out

    def __class_getitem__(cls, item):
        return item


class InOut:
    """`pl.InOut[T]`: a parameter the function reads and writes (direction InOut)."""
    direction = ParamDirection.InOut

    def __class_getitem__(cls, item):
        return item


class Ptr:
    """`pl.Ptr`: the handle of an on-chip allocation (`pl.tile.alloc`) or a window buffer."""


class Unknown:
    """`pl.Unknown`: the type of values produced by side-effect-only ops."""


def annotation_class_type(cls) -> Optional[Type]:
    """The IR type of an annotation written without subscript (`pl.Ptr`), else None."""
    if cls is Ptr:
        return PtrType()
    if cls is Unknown:
        return UnknownType()
    return None


def TileView(valid_shape=(), stride=(), start_offset=None, **kwargs) -> _IrTileView:
    """`pl.TileView(valid_shape=..., stride=..., start_offset=..., blayout=..., ...)`."""
    if start_offset is not None and not isinstance(start_offset, Expr):
        start_offset = ConstInt(int(start_offset), INDEX)
    return _IrTileView(valid_shape=valid_shape, stride=stride, start_offset=start_offset, **kwargs)


def TensorView(stride=(), layout: TensorLayout = TensorLayout.ND, valid_shape=(), **kwargs) -> _IrTensorView:
    """`pl.TensorView(stride=..., layout=..., valid_shape=..., pad=...)`."""
    return _IrTensorView(stride=stride, layout=layout, valid_shape=valid_shape, **kwargs)


def MemRef(base, byte_offset=None, size=None, *, slots=None):
    """`pl.MemRef(base_ptr, byte_offset, size)`: where a tile lives; `pl.MemRef("name"[, slots=N])[k]`
    declares a pinned allocation (pypto/language/memref_decl.py)."""
    if isinstance(base, str):
        from pypto.language.memref_decl import declare
        return declare(base, byte_offset, size, slots)
    return _IrMemRef(base, 0 if byte_offset is None else byte_offset, size or 0)


def dynamic(name: str, dtype: DataType = INDEX) -> Var:
    """`M = pl.dynamic("M")`: a symbolic INDEX dim usable in shapes (reuse it where dims must match).
    `dtype` lets the printer declare a free dim of another integer dtype (an INT32 scalar named by a
    valid shape) so a print / parse round trip keeps it."""
    return Var(name, ScalarType(dtype))


def const(value: Any, dtype: Optional[DataType] = None) -> Expr:
    """`pl.const(5, pl.INT32)`: a literal of an explicit dtype."""
    return _ir_const(value, dtype)
