"""tensor.* ops: whole-tensor operations in GM; ConvertTensorToTileOps lowers them to tile.* ops.

They share the tile family's type rules (pypto/ir/ops/common.py), with Tensor operands.

    t = create_op_call("tensor.create", [[64, 64]], {"dtype": FP32})
"""

from __future__ import annotations

from pypto.ir.dtypes import INDEX, DataType
from pypto.ir.enums import AtomicType, CastMode, CmpType, PadValue, TensorLayout
from pypto.errors import TypeCheckError
from pypto.ir.ops.common import (assemble_rule, cast_rule, cmp_rule, cmps_rule, concat_rule, dims_equal, expands_rule,
                                 expect_axis, expect_tensor, expect_tuple, fillpad_rule, fmt_shape, read_rule,
                                 reshape_rule, same_dtype, slice_rule, transpose_rule, write_rule)
from pypto.ir.ops.registry import CUBE, READ, READWRITE, SHARED, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.ops.tile import accumulator_dtype
from pypto.ir.ops.tile_cube import matmul_batch_dims
from pypto.ir.types import ScalarType, TensorType, TensorView


def _compute(name: str, args: tuple, deduce, **extra) -> OpDef:
    """A tensor-level compute op, lowered to the vector tile op of the same short name."""
    return register_op(OpDef(name, args=args, deduce=deduce, affinity=VECTOR, lowers_to="tile." + name[7:], **extra))


# ---------------------------------------------------------------------------- creation
def _create_type(args, kw):
    shape = expect_tuple("tensor.create", "shape", args[0])
    view = TensorView(layout=kw["layout"]) if kw["layout"] is not TensorLayout.ND else None
    return TensorType(shape, kw["dtype"], tensor_view=view)


register_op(OpDef("tensor.create", args=("shape",),
                  kwargs={"dtype": Kwarg(DataType), "layout": Kwarg(TensorLayout, TensorLayout.ND)},
                  deduce=_create_type, affinity=SHARED, description="a fresh GM tensor (contents undefined)"))


def _full_type(args, kw):
    return TensorType(expect_tuple("tensor.full", "shape", args[0]), kw["dtype"])


register_op(OpDef("tensor.full", args=("shape",), kwargs={"dtype": Kwarg(DataType), "value": Kwarg((int, float))},
                  deduce=_full_type, affinity=SHARED, lowers_to="tile.full"))


# ---------------------------------------------------------------------------- elementwise
# The regular elementwise, reduction and broadcast ops (tensor and tile form) are rows of
# pypto/ir/ops/elementwise.py; the ops here lower 1:1 to the tile op of the same short name too.
_compute("tensor.cast", ("x",), cast_rule("tensor.cast"),
         kwargs={"target_type": Kwarg(DataType), "mode": Kwarg(CastMode, CastMode.round)})
_compute("tensor.cmp", ("lhs", "rhs"), cmp_rule("tensor.cmp"), kwargs={"cmp_type": Kwarg(CmpType, CmpType.EQ)})
_compute("tensor.cmps", ("lhs", "rhs"), cmps_rule("tensor.cmps"), kwargs={"cmp_type": Kwarg(CmpType, CmpType.EQ)})

_compute("tensor.expands", ("target", "scalar"), expands_rule("tensor.expands"))

# ---------------------------------------------------------------------------- shape and view
_compute("tensor.reshape", ("x", "shape"), reshape_rule("tensor.reshape"))
_compute("tensor.transpose", ("x", "axis1", "axis2"), transpose_rule("tensor.transpose"))
_compute("tensor.concat", ("src0", "src1"), concat_rule("tensor.concat"))
_compute("tensor.fillpad", ("x",), fillpad_rule("tensor.fillpad"), kwargs={"pad_value": Kwarg(PadValue, PadValue.zero)})
# slice / assemble / read / write address GM themselves (no entry tile.load for their operands).
register_op(OpDef("tensor.slice", args=("x", "shape", "offset", "valid_shape"), deduce=slice_rule("tensor.slice"),
                  min_args=3, kwargs={"pad_value": Kwarg(PadValue, None)}, effects={0: READ}, self_loading=True, description="a window (view) of a tensor"))
register_op(OpDef("tensor.assemble", args=("target", "source", "offset"), deduce=assemble_rule("tensor.assemble"),
                  kwargs={"atomic": Kwarg(AtomicType, AtomicType.None_)},   # Add: accumulate (lowers to an atomic store)
                  effects={0: READWRITE, 1: READ}, reuses_input=0, self_loading=True,
                  description="write source into target at offset; the result is the updated target"))
register_op(OpDef("tensor.read", args=("src", "indices"), deduce=read_rule("tensor.read"), effects={0: READ},
                  self_loading=True, description="one element of a tensor as a scalar"))
register_op(OpDef("tensor.write", args=("dst", "indices", "value"), deduce=write_rule("tensor.write"),
                  effects={0: READWRITE}, reuses_input=0, self_loading=True,
                  description="set one element of a tensor; the result is the updated tensor"))


def _dim_type(args, kw):
    t = expect_tensor("tensor.dim", "t", args[0])
    expect_axis("tensor.dim", "axis", args[1], t.rank)
    return ScalarType(INDEX)


register_op(OpDef("tensor.dim", args=("t", "axis"), deduce=_dim_type, description="the extent of one axis"))


# ---------------------------------------------------------------------------- matmul
def _operands(name: str, args, kw) -> tuple:
    """(M, N) of lhs × rhs with the a_trans / b_trans flags applied; checks K agrees."""
    a = expect_tensor(name, "lhs", args[0])
    b = expect_tensor(name, "rhs", args[1])
    if a.rank < 2 or b.rank < 2:
        raise TypeCheckError(f"{name}: lhs and rhs must be at least 2-D tensors ([..., M, K] and [..., K, N])")
    same_dtype(name, a.dtype, b.dtype, "arguments 'lhs' and 'rhs'")
    m, k1 = (a.shape[-1], a.shape[-2]) if kw.get("a_trans") else (a.shape[-2], a.shape[-1])
    k2, n = (b.shape[-1], b.shape[-2]) if kw.get("b_trans") else (b.shape[-2], b.shape[-1])
    if not dims_equal((k1,), (k2,)):
        raise TypeCheckError(f"{name}: inner dimensions differ: lhs {fmt_shape(a.shape)} × rhs {fmt_shape(b.shape)}",
                             hint="lhs is [M, K] and rhs [K, N]; a_trans / b_trans say an operand is stored transposed")
    # leading (batch) dims broadcast like numpy's matmul; the lowering is tile.batch_matmul
    batch = matmul_batch_dims(name, a.shape, b.shape) if max(a.rank, b.rank) > 2 else []
    return a, (*batch, m, n)


def _matmul_type(args, kw):
    a, shape = _operands("tensor.matmul", args, kw)
    return TensorType(shape, kw["out_dtype"] or a.dtype)


def _matmul_acc_type(args, kw):
    acc = expect_tensor("tensor.matmul_acc", "acc", args[0])
    a, shape = _operands("tensor.matmul_acc", args[1:], kw)
    want = accumulator_dtype(a.dtype)
    if acc.dtype is not want:
        raise TypeCheckError(f"tensor.matmul_acc: argument 'acc' must be {want.name} (the accumulator of "
                             f"{a.dtype.name} inputs), got {acc.dtype.name}")
    if not dims_equal(acc.shape, shape):
        raise TypeCheckError(f"tensor.matmul_acc: acc {fmt_shape(acc.shape)} does not match the product "
                             f"{fmt_shape(shape)}")
    return TensorType(acc.shape, acc.dtype)


_TRANS = {"a_trans": Kwarg(bool, False), "b_trans": Kwarg(bool, False)}
# matmul reads its GM operands itself: the lowering loads them into Mat / Left / Right tiles.
register_op(OpDef("tensor.matmul", args=("lhs", "rhs"), deduce=_matmul_type, affinity=CUBE, self_loading=True,
                  kwargs={"out_dtype": Kwarg(DataType, None), **_TRANS, "c_matrix_nz": Kwarg(bool, False)},
                  effects={0: READ, 1: READ}, description="lhs [M,K] × rhs [K,N] → [M,N]"))
register_op(OpDef("tensor.matmul_acc", args=("acc", "lhs", "rhs"), deduce=_matmul_acc_type, affinity=CUBE,
                  self_loading=True, kwargs=dict(_TRANS), effects={0: READWRITE, 1: READ, 2: READ}, reuses_input=0,
                  description="acc + lhs × rhs"))
