"""Tensor forms of select and reinterpret_view (seed 003, tensor-level coverage).

Each lowers 1:1 in ConvertTensorToTileOps to the tile op of the same short name, so a
tensor-level kernel can use them directly:

    y = pl.select(pl.cmps(x, 0.0, cmp_type=pl.CmpType.GT), x, 0.0)   # tensor.select → tile.select
    u = pl.reinterpret_view(x, pl.INT32)                             # same bytes, same shape

The select rule mirrors tile.select's (pypto/ir/ops/tile_select.py) on GM tensors: `cond` is the
packed predicate mask tensor.cmp / tensor.cmps produce, scalar branches are literals.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.ops.common import (MASK_DTYPE, describe, dims_equal, expect_scalar, expect_tensor, fmt_shape,
                                 packed_mask_shape, result_like, same_dtype, scalar_fits)
from pypto.ir.ops.registry import READ, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.ops.tile_select import _same_exprs, literal_value
from pypto.ir.dtypes import DataType
from pypto.ir.expr import const as to_expr
from pypto.ir.types import TensorType
from pypto.ir.ops.reinterpret_shape import reinterpreted_shape


# ---------------------------------------------------------------------------- select
def _select_type(args, kw):
    name = "tensor.select"
    cond, on_true, on_false = args
    shaped = [(arg, e) for arg, e in (("on_true", on_true), ("on_false", on_false)) if isinstance(e.type, TensorType)]
    if not shaped:
        raise TypeCheckError(f"{name}: 'on_true' and 'on_false' are both scalars; at least one must be a Tensor",
                             hint="a scalar-only choice is ordinary scalar arithmetic")
    ref: TensorType = shaped[0][1].type
    if len(shaped) == 2:
        other: TensorType = on_false.type
        same_dtype(name, ref.dtype, other.dtype, "arguments 'on_true' and 'on_false'")
        if not dims_equal(ref.shape, other.shape):
            raise TypeCheckError(f"{name}: 'on_true' {fmt_shape(ref.shape)} and 'on_false' {fmt_shape(other.shape)} "
                                 "have different shapes; select does not broadcast",
                                 hint="broadcast explicitly (row_expand / col_expand) to one shape first")
    else:
        arg, e = ("on_false", on_false) if shaped[0][0] == "on_true" else ("on_true", on_true)
        s = expect_scalar(name, arg, e)
        if literal_value(e) is None:
            raise TypeCheckError(f"{name}: scalar argument '{arg}' must be a compile-time constant, got a runtime "
                                 f"{describe(s)}", hint="pass the runtime value as a tensor branch")
        scalar_fits(name, ref, s, arg)
    if ref.rank < 1:
        raise TypeCheckError(f"{name}: the branches must be tensors, not rank-0 values")
    want, want_valid = packed_mask_shape(name, ref.shape, ref.valid_shape)
    c = cond.type
    if not (isinstance(c, TensorType) and c.dtype is MASK_DTYPE and _same_exprs(c.shape, want)
            and _same_exprs(c.valid_shape, want_valid)):
        raise TypeCheckError(f"{name}: argument 'cond' must be the packed {MASK_DTYPE.name} predicate mask "
                             f"{fmt_shape(want)} of a {fmt_shape(ref.shape)} comparison, got {describe(c)}",
                             hint="build it with pl.cmp / pl.cmps on operands of this shape")
    return result_like(ref)


register_op(OpDef("tensor.select", args=("cond", "on_true", "on_false"), deduce=_select_type, affinity=VECTOR,
                  effects={0: READ, 1: READ, 2: READ}, lowers_to="tile.select", description="cond ? on_true : on_false per element"))


# ---------------------------------------------------------------------------- reinterpret_view
def _reinterpret_type(args, kw):
    name = "tensor.reinterpret_view"
    t = expect_tensor(name, "x", args[0])
    view = t.tensor_view
    partial = view.valid_shape if view is not None and view.valid_shape else None
    shape, changed = reinterpreted_shape(name, t.shape, partial, t.dtype.bits, kw["dtype"].bits, kw["shape"])
    if changed and view is not None and view.stride:
        raise TypeCheckError(f"{name}: a strided view cannot change width or shape",
                             hint="reinterpret a packed tensor")
    return TensorType(shape, kw["dtype"], tensor_view=view)


register_op(OpDef("tensor.reinterpret_view", args=("x",),
                  kwargs={"dtype": Kwarg(DataType), "shape": Kwarg(object, None)},
                  deduce=_reinterpret_type, affinity=VECTOR, effects={0: READ}, lowers_to="tile.reinterpret_view",
                  description="the same bytes as another dtype (a width change rescales the last dim, or shape=)"))
