"""Type rules of the tensor.* ops (shared with the tile family, with Tensor operands)."""

import pytest

from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP16, FP32, INDEX, INT32, UINT8
from pypto.ir.enums import TensorLayout
from pypto.ir.ops import create_op_call, get_op
from pypto.ir.ops.registry import READWRITE, SHARED
from pypto.ir.types import ScalarType, TensorType, TileType


def tensor(shape=(128, 64), dtype=FP32, name="g"):
    return ir.Var(name, TensorType(list(shape), dtype))


def dims(shape):
    return [d.value for d in shape]


def test_create_and_full():
    c = create_op_call("tensor.create", [[64, 32]], {"dtype": FP16})
    assert isinstance(c.type, TensorType) and dims(c.type.shape) == [64, 32] and c.type.dtype is FP16
    assert c.kwargs["layout"] is TensorLayout.ND and get_op("tensor.create").affinity == SHARED
    dn = create_op_call("tensor.create", [[64, 32]], {"dtype": FP16, "layout": "DN"})
    assert dn.type.tensor_view.layout is TensorLayout.DN
    f = create_op_call("tensor.full", [[8]], {"dtype": INT32, "value": 3})
    assert f.type.dtype is INT32 and f.kwargs["value"] == 3


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_and_scalar_forms(op):
    assert dims(create_op_call(f"tensor.{op}", [tensor(), tensor(name="h")]).type.shape) == [128, 64]
    assert create_op_call(f"tensor.{op}s", [tensor(), 1.0]).type.dtype is FP32


def test_fp32_plus_int32_rejected():
    with pytest.raises(TypeCheckError) as e:
        create_op_call("tensor.add", [tensor(), tensor(dtype=INT32)])
    assert "tensor.add" in str(e.value) and "FP32" in str(e.value) and "INT32" in str(e.value)
    assert "pl.cast" in e.value.hint


def test_tensor_op_rejects_tile():
    tile = ir.Var("t", TileType([128, 64], FP32))
    with pytest.raises(TypeCheckError, match="argument 'lhs' must be a Tensor"):
        create_op_call("tensor.add", [tile, tensor()])


def test_reductions_without_scratch():
    assert dims(create_op_call("tensor.row_sum", [tensor()]).type.shape) == [128, 1]
    assert dims(create_op_call("tensor.col_max", [tensor()]).type.shape) == [1, 64]


def test_cmp_unary_cast():
    m = create_op_call("tensor.cmp", [tensor(), tensor(name="h")], {"cmp_type": "NE"})
    assert m.type.dtype is UINT8 and dims(m.type.shape) == [128, 32]
    assert create_op_call("tensor.exp", [tensor()]).type.dtype is FP32
    assert create_op_call("tensor.cast", [tensor()], {"target_type": FP16}).type.dtype is FP16


def test_slice_view_and_bounds():
    s = create_op_call("tensor.slice", [tensor(), [32, 64], [96, 0]], {})
    assert dims(s.type.shape) == [32, 64] and get_op("tensor.slice").self_loading
    v = create_op_call("tensor.slice", [tensor(), [32, 64], [0, 0], [20, 64]]).type
    assert dims(v.valid_shape) == [20, 64]
    with pytest.raises(TypeCheckError, match="exceeds the extent 128"):
        create_op_call("tensor.slice", [tensor(), [64, 64], [96, 0]])


def test_assemble_read_write_dim():
    a = get_op("tensor.assemble")
    assert a.self_loading and a.effects[0] == READWRITE and a.reuses_input == 0
    assert dims(create_op_call("tensor.assemble", [tensor(), tensor((32, 64), name="s"), [32, 0]]).type.shape) == [128, 64]
    with pytest.raises(TypeCheckError, match="target and source"):
        create_op_call("tensor.assemble", [tensor(), tensor((32, 64), FP16, name="s"), [32, 0]])
    r = create_op_call("tensor.read", [tensor(dtype=INT32), [1, 2]])
    assert isinstance(r.type, ScalarType) and r.type.dtype is INT32 and get_op("tensor.read").self_loading
    w = create_op_call("tensor.write", [tensor(), [1, 2], 0.5])
    assert isinstance(w.type, TensorType) and get_op("tensor.write").self_loading
    d = create_op_call("tensor.dim", [tensor(), 1])
    assert d.type.dtype is INDEX
    with pytest.raises(TypeCheckError, match="out of range"):
        create_op_call("tensor.dim", [tensor(), 2])


def test_reshape_transpose_fillpad():
    assert dims(create_op_call("tensor.reshape", [tensor(), [64, 128]]).type.shape) == [64, 128]
    assert dims(create_op_call("tensor.transpose", [tensor(), 0, 1]).type.shape) == [64, 128]
    assert dims(create_op_call("tensor.fillpad", [tensor()]).type.shape) == [128, 64]


def test_dynamic_dims_accepted():
    m = ir.Var("M", ScalarType(INDEX))
    a = ir.Var("a", TensorType([m, 64], FP32))
    b = ir.Var("b", TensorType([m, 64], FP32))
    c = create_op_call("tensor.add", [a, b])
    assert c.type.shape[0] is m


def test_matmul_with_transpose_flags():
    a, b = tensor((64, 32), FP16, "a"), tensor((128, 32), FP16, "b")
    c = create_op_call("tensor.matmul", [a, b], {"b_trans": True})
    assert dims(c.type.shape) == [64, 128] and c.type.dtype is FP16 and get_op("tensor.matmul").self_loading
    assert create_op_call("tensor.matmul", [a, b], {"b_trans": True, "out_dtype": FP32}).type.dtype is FP32
    with pytest.raises(TypeCheckError, match="inner dimensions"):
        create_op_call("tensor.matmul", [a, b])
    acc = tensor((64, 128), FP32, "acc")
    assert create_op_call("tensor.matmul_acc", [acc, a, b], {"b_trans": True}).type.dtype is FP32


def test_bitwise_and_trig():
    i = tensor(dtype=INT32)
    assert create_op_call("tensor.ands", [i, 1]).type.dtype is INT32
    assert create_op_call("tensor.not_", [i]).type.dtype is INT32
    with pytest.raises(TypeCheckError, match="floating-point"):
        create_op_call("tensor.sin", [i])
