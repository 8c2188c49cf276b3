"""Metadata-only views and valid-region ops: tensor.view, tile.set_validshape, tile.fillpad_inplace.

The collective recipes of LowerCompositeOps (seed 001, `pld.tensor.allreduce`) walk a window
through one packed 2-D view and keep tile allocations static while the valid region changes:

    flat = pl.tensor.view(data, [1, 24])                 # [2, 3, 4] window seen as one row (no copy)
    acc = pl.tile.fillpad_inplace(loaded)                # pad the ragged tail with 0, same buffer
    out = pl.tile.set_validshape(acc, 1, valid_cols)     # narrow the valid region, same buffer

tensor.view reinterprets the same bytes at another shape (row-major, so the element count must
agree when static) and may carry a logical valid_shape; a window stays a window. The tile ops
keep their input's buffer (OpDef.reuses_input=0): set_validshape only changes the valid region,
fillpad_inplace writes the pad value outside it and makes the tile fully valid.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.enums import PadValue, TensorLayout
from pypto.ir.expr import as_int
from pypto.ir.ops.common import (describe, expect_scalar, expect_tensor, expect_tile, expect_tuple, fillpad_rule,
                                 fmt_shape, is_full, numel)
from pypto.ir.ops.registry import READ, READWRITE, SHARED, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.types import TensorView, TileType, TileView


def is_packed_stride(stride, shape) -> bool:
    """An explicit stride that is exactly the row-major packing of `shape` ([12, 4, 1] on [2, 3, 4])
    addresses the contiguous tensor, so it is not "strided". Only statically provable strides qualify."""
    if len(stride) != len(shape):
        return False
    expect = 1
    for i in range(len(shape) - 1, -1, -1):
        if as_int(stride[i]) != expect:
            return False
        if i and as_int(shape[i]) is None:
            return False
        expect *= as_int(shape[i]) or 1
    return True


def _view_type(args, kw):
    name = "tensor.view"
    t = expect_tensor(name, "x", args[0])
    shape = expect_tuple(name, "shape", args[1])
    valid = expect_tuple(name, "valid_shape", args[2]) if len(args) > 2 else None
    if valid is not None and len(valid) != len(shape):
        raise TypeCheckError(f"{name}: valid_shape {fmt_shape(valid)} needs one entry per dim of shape {fmt_shape(shape)}")
    view = t.tensor_view
    strided = view is not None and bool(view.stride) and not is_packed_stride(view.stride, t.shape)
    if view is not None and (strided or view.layout is not TensorLayout.ND):
        raise TypeCheckError(f"{name}: the source {describe(t)} is strided or not ND; only packed row-major tensors "
                             "can be viewed at another shape", hint="materialise the tensor contiguously first")
    n_src, n_dst = numel(t.shape), numel(shape)
    if n_src is not None and n_dst is not None and n_src != n_dst:
        raise TypeCheckError(f"{name}: shape {fmt_shape(shape)} holds {n_dst} elements, the source {describe(t)} "
                             f"holds {n_src}", hint="a view reinterprets the same bytes: keep the element count")
    tv = TensorView(valid_shape=valid) if valid is not None and not is_full(shape, valid) else None
    return type(t)(shape, t.dtype, tensor_view=tv)


register_op(OpDef("tensor.view", args=("x", "shape", "valid_shape"), min_args=2, deduce=_view_type,
                  effects={0: READ}, self_loading=True,
                  description="the same packed bytes at another shape (optionally with a logical valid_shape)"))


def _set_validshape_type(args, kw, family: str = "tile"):
    name = f"{family}.set_validshape"
    t = expect_tile(name, "x", args[0]) if family == "tile" else expect_tensor(name, "x", args[0])
    if len(t.shape) != 2:
        raise TypeCheckError(f"{name}: needs a 2-D tile, got {describe(t)}", hint="flatten the tile to [rows, cols]")
    expect_scalar(name, "rows", args[1])
    expect_scalar(name, "cols", args[2])
    for axis, (v, d) in enumerate(zip(args[1:3], t.shape)):
        vi, di = as_int(v), as_int(d)
        if isinstance(vi, int) and isinstance(di, int) and not 0 <= vi <= di:
            raise TypeCheckError(f"{name}: {('rows', 'cols')[axis]}={vi} is outside the tile extent {di}")
    if family == "tensor":
        return type(t)(t.shape, t.dtype, tensor_view=(t.tensor_view or TensorView()).replace(valid_shape=(args[1], args[2])))
    view = t.effective_view.replace(valid_shape=(args[1], args[2]))
    return TileType(t.shape, t.dtype, tile_view=view, memory_space=t.memory_space)


register_op(OpDef("tile.set_validshape", args=("x", "rows", "cols"), deduce=_set_validshape_type, affinity=SHARED,
                  output_memory="inherit", effects={0: READ}, reuses_input=0,
                  description="the same tile buffer with valid region [rows, cols] (no data moves)"))
# The tensor form narrows a kernel tensor's valid region; ConvertTensorToTileOps lowers it 1:1.
register_op(OpDef("tensor.set_validshape", args=("x", "rows", "cols"),
                  deduce=lambda args, kw: _set_validshape_type(args, kw, "tensor"), affinity=VECTOR,
                  lowers_to="tile.set_validshape", effects={0: READ},
                  description="the same 2-D tensor with valid region [rows, cols] (metadata only)"))
register_op(OpDef("tile.fillpad_inplace", args=("x",), kwargs={"pad_value": Kwarg(PadValue, PadValue.zero)},
                  deduce=fillpad_rule("tile.fillpad_inplace"), affinity=VECTOR, output_memory="inherit",
                  effects={0: READWRITE}, reuses_input=0,
                  description="fill the region outside valid_shape with pad_value in place; the tile becomes fully valid"))
