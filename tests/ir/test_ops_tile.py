"""Type rules of the tile.* ops: accepted forms give the documented result type; mistakes are
rejected with a TypeCheckError naming the op and the argument."""

import pytest

from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.dtypes import BF16, FP16, FP32, INDEX, INT32, UINT8, DataType
from pypto.ir.enums import CastMode, CmpType, MemorySpace, PadValue, TileLayout
from pypto.ir.ops import create_op_call, get_op
from pypto.ir.ops.common import packed_mask_shape
from pypto.ir.ops.registry import READ, READWRITE, SHARED, VECTOR, WRITE
from pypto.ir.types import PtrType, ScalarType, TensorType, TileType

Vec, Mat = MemorySpace.Vec, MemorySpace.Mat


def tile(shape=(64, 64), dtype=FP32, valid=None, space=Vec, name="t"):
    t = TileType(list(shape), dtype, memory_space=space)
    return ir.Var(name, t.with_valid_shape(list(valid)) if valid else t)


def tensor(shape=(128, 128), dtype=FP32, name="g"):
    return ir.Var(name, TensorType(list(shape), dtype))


def scalar(dtype=FP32, name="s"):
    return ir.Var(name, ScalarType(dtype))


def dims(shape):
    return [d.value for d in shape]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_keeps_lhs_type_and_space(op):
    a = tile(valid=(64, 48))
    c = create_op_call(f"tile.{op}", [a, tile(name="b")])
    assert dims(c.type.shape) == [64, 64] and c.type.dtype is FP32
    assert c.type.memory_space is Vec and dims(c.type.valid_shape) == [64, 48]
    assert get_op(f"tile.{op}").affinity == VECTOR and get_op(f"tile.{op}").output_memory == "inherit"


def test_binary_rejects_mixed_dtypes_naming_op_args_and_dtypes():
    with pytest.raises(TypeCheckError) as e:
        create_op_call("tile.add", [tile(), tile(dtype=INT32)])
    msg = str(e.value)
    assert "tile.add" in msg and "'lhs'" in msg and "'rhs'" in msg and "FP32" in msg and "INT32" in msg
    assert "pl.cast" in msg


def test_binary_rejects_shape_mismatch_with_hint():
    with pytest.raises(TypeCheckError) as e:
        create_op_call("tile.mul", [tile(), tile(shape=(64, 32))])
    assert "[64, 64]" in str(e.value) and "[64, 32]" in str(e.value) and e.value.hint


def test_binary_rejects_tensor_operand():
    with pytest.raises(TypeCheckError, match="argument 'rhs' must be a Tile"):
        create_op_call("tile.add", [tile(), tensor()])


@pytest.mark.parametrize("op", ["adds", "subs", "muls", "divs", "maximums", "minimums"])
def test_scalar_forms(op):
    c = create_op_call(f"tile.{op}", [tile(dtype=FP16), 2.0])
    assert c.type.dtype is FP16
    with pytest.raises(TypeCheckError, match="must be a scalar"):
        create_op_call(f"tile.{op}", [tile(), tile()])


def test_scalar_float_into_int_tile_rejected():
    with pytest.raises(TypeCheckError, match="FP32 scalar"):
        create_op_call("tile.adds", [tile(dtype=INT32), 1.5])
    assert create_op_call("tile.adds", [tile(dtype=INT32), 1]).type.dtype is INT32


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "rsqrt", "recip"])
def test_float_only_unary(op):
    assert create_op_call(f"tile.{op}", [tile(dtype=BF16)]).type.dtype is BF16
    with pytest.raises(TypeCheckError, match="floating-point"):
        create_op_call(f"tile.{op}", [tile(dtype=INT32)])


@pytest.mark.parametrize("op", ["neg", "abs", "relu"])
def test_any_dtype_unary(op):
    assert create_op_call(f"tile.{op}", [tile(dtype=INT32)]).type.dtype is INT32


def test_cast_sets_dtype_and_accepts_mode_names():
    c = create_op_call("tile.cast", [tile(valid=(64, 10))], {"target_type": FP16, "mode": "floor"})
    assert c.type.dtype is FP16 and c.kwargs["mode"] is CastMode.floor and dims(c.type.valid_shape) == [64, 10]
    assert create_op_call("tile.cast", [tile()], {"target_type": INT32}).kwargs["mode"] is CastMode.round
    with pytest.raises(TypeCheckError, match="requires the keyword argument 'target_type'"):
        create_op_call("tile.cast", [tile()])


def test_packed_mask_shape_rule():
    shape, valid = packed_mask_shape("x", TileType([16, 64], FP32).shape, TileType([16, 64], FP32).shape)
    assert dims(shape) == [16, 32] and dims(valid) == [16, 8]
    shape, valid = packed_mask_shape("x", TileType([8, 300], FP32).shape, TileType([8, 257], FP32).shape)
    assert dims(shape) == [8, 64] and dims(valid) == [8, 33]


def test_cmp_and_cmps_give_packed_uint8_mask():
    c = create_op_call("tile.cmp", [tile(valid=(64, 20)), tile(name="b")], {"cmp_type": "GT"})
    assert c.type.dtype is UINT8 and dims(c.type.shape) == [64, 32] and dims(c.type.valid_shape) == [64, 3]
    assert c.kwargs["cmp_type"] is CmpType.GT
    c = create_op_call("tile.cmps", [tile(), 0.0], {"cmp_type": 2})
    assert c.kwargs["cmp_type"] is CmpType.LT and dims(c.type.shape) == [64, 32]


def test_dynamic_valid_cols_give_ceil_expression():
    n = ir.Var("n", ScalarType(INDEX))
    c = create_op_call("tile.cmps", [tile(valid=(64, n)), 1.0])
    assert isinstance(c.type.valid_shape[1], ir.BinaryExpr) and c.type.valid_shape[1].op == "floordiv"


@pytest.mark.parametrize("op", ["row_sum", "row_max", "row_min"])
def test_row_reductions_need_scratch_and_give_column(op):
    c = create_op_call(f"tile.{op}", [tile(valid=(40, 64)), tile(name="tmp")])
    assert dims(c.type.shape) == [64, 1] and dims(c.type.valid_shape) == [40, 1]
    with pytest.raises(TypeCheckError, match="positional"):
        create_op_call(f"tile.{op}", [tile()])


@pytest.mark.parametrize("op", ["col_sum", "col_max", "col_min"])
def test_col_reductions(op):
    c = create_op_call(f"tile.{op}", [tile(shape=(16, 64))])
    assert dims(c.type.shape) == [1, 64]


@pytest.mark.parametrize("prefix,vec_shape", [("row_expand", (64, 1)), ("col_expand", (1, 64))])
@pytest.mark.parametrize("kind", ["", "_add", "_sub", "_mul", "_div", "_max", "_min", "_expdif"])
def test_expand_family(prefix, vec_shape, kind):
    c = create_op_call(f"tile.{prefix}{kind}", [tile(), tile(shape=vec_shape, name="v")])
    assert dims(c.type.shape) == [64, 64]
    with pytest.raises(TypeCheckError, match="vec must be a"):
        create_op_call(f"tile.{prefix}{kind}", [tile(), tile(shape=(64, 64), name="v")])


def test_expands():
    assert dims(create_op_call("tile.expands", [tile(), 0.0]).type.shape) == [64, 64]


def test_reshape_transpose_slice():
    assert dims(create_op_call("tile.reshape", [tile(), [32, 128]]).type.shape) == [32, 128]
    with pytest.raises(TypeCheckError, match="element count"):
        create_op_call("tile.reshape", [tile(), [32, 64]])
    t = create_op_call("tile.transpose", [tile(shape=(16, 64), valid=(16, 50)), 0, 1]).type
    assert dims(t.shape) == [64, 16] and dims(t.valid_shape) == [50, 16]
    assert create_op_call("tile.transpose", [tile(), 0, 1, tile(name="tmp")]).type is not None
    s = create_op_call("tile.slice", [tile(), [16, 32], [16, 0], [8, 32]]).type
    assert dims(s.shape) == [16, 32] and dims(s.valid_shape) == [8, 32] and s.memory_space is Vec
    with pytest.raises(TypeCheckError, match="exceeds"):
        create_op_call("tile.slice", [tile(), [16, 32], [56, 0]])


def test_assemble_fillpad_read_write():
    op = get_op("tile.assemble")
    assert op.reuses_input == 0 and op.effects[0] == READWRITE
    assert dims(create_op_call("tile.assemble", [tile(), tile(shape=(16, 64)), [16, 0]]).type.shape) == [64, 64]
    with pytest.raises(TypeCheckError, match="exceeds the target"):
        create_op_call("tile.assemble", [tile(), tile(shape=(16, 64)), [56, 0]])
    f = create_op_call("tile.fillpad", [tile(valid=(64, 3))])
    assert f.type.valid_shape == f.type.shape and f.type.tile_view.pad is PadValue.zero
    r = create_op_call("tile.read", [tile(dtype=FP16), [0, 1]])
    assert r.type == ScalarType(FP16) or ir.structural_equal(r.type, ScalarType(FP16))
    w = create_op_call("tile.write", [tile(), [0, 1], 2.0])
    assert dims(w.type.shape) == [64, 64] and get_op("tile.write").reuses_input == 0
    with pytest.raises(TypeCheckError, match="one entry per dim"):
        create_op_call("tile.read", [tile(), [0]])


def test_load_store_move_create_full_alloc():
    ld = create_op_call("tile.load", [tensor(), [0, 0], [32, 32], [32, 20]], {"target_memory": "Mat"})
    assert ld.type.memory_space is Mat and dims(ld.type.valid_shape) == [32, 20]
    assert get_op("tile.load").self_loading
    with pytest.raises(TypeCheckError, match="Vec or Mat"):
        create_op_call("tile.load", [tensor(), [0, 0], [32, 32], [32, 32]], {"target_memory": MemorySpace.Left})
    st = create_op_call("tile.store", [tile(), [0, 0], tensor()])
    assert isinstance(st.type, TensorType) and get_op("tile.store").effects[2] == WRITE
    with pytest.raises(TypeCheckError, match="tile and output tensor"):
        create_op_call("tile.store", [tile(dtype=FP16), [0, 0], tensor()])
    mv = create_op_call("tile.move", [tile(space=Mat)], {"target_memory": MemorySpace.Left,
                                                        "blayout": TileLayout.col_major})
    assert mv.type.memory_space is MemorySpace.Left and mv.type.effective_view.blayout is TileLayout.col_major
    assert mv.kwargs["slayout"] is None
    cr = create_op_call("tile.create", [[16, 16]], {"dtype": FP16})
    assert cr.type.memory_space is Vec and get_op("tile.create").affinity == SHARED
    fu = create_op_call("tile.full", [[16, 16]], {"dtype": FP32, "value": 0})
    assert fu.kwargs["value"] == 0 and fu.type.dtype is FP32
    al = create_op_call("tile.alloc", [], {"memory_space": Vec, "size": 1024})
    assert isinstance(al.type, PtrType) and al.kwargs["addr"] == -1 and get_op("tile.alloc").affinity == SHARED


def test_vector_ops_declare_affinity_memory_and_effects():
    from pypto.ir.ops.registry import all_ops
    arithmetic = ("add", "sub", "mul", "div", "maximum", "minimum")
    names = [f"tile.{n}" for n in arithmetic + ("neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt", "recip")]
    names += [f"tile.{n}s" for n in arithmetic]
    names += [n for n, op in all_ops().items() if op.numpy is not None and n.startswith("tile.")]
    names += ["tile.cast", "tile.cmp", "tile.cmps", "tile.row_sum", "tile.col_max", "tile.row_expand_mul"]
    for name in names:
        op = get_op(name)
        assert op.affinity == VECTOR and op.output_memory == "inherit", name
        assert op.effects.get(0) == READ and op.input_memory[0] == (Vec,), name


@pytest.mark.parametrize("op", ["and_", "or_", "shl", "shr"])
def test_bitwise_ops_are_integer_only(op):
    assert create_op_call(f"tile.{op}", [tile(dtype=INT32), tile(dtype=INT32, name="b")]).type.dtype is INT32
    with pytest.raises(TypeCheckError, match="integer dtype"):
        create_op_call(f"tile.{op}", [tile(), tile(name="b")])


def test_ops_with_scratch_tiles():
    i = tile(dtype=INT32)
    assert create_op_call("tile.xor", [i, i, i]).type.dtype is INT32
    assert create_op_call("tile.xors", [i, 3, i]).type.dtype is INT32
    assert create_op_call("tile.rem", [tile(), tile(), tile()]).type.dtype is FP32
    with pytest.raises(TypeCheckError, match="positional"):
        create_op_call("tile.rem", [tile(), tile()])
    assert create_op_call("tile.lrelu", [tile(), 0.1]).type.dtype is FP32
    assert dims(create_op_call("tile.row_prod", [tile(), tile()]).type.shape) == [64, 1]


def test_sel_checks_the_packed_mask():
    mask = create_op_call("tile.cmp", [tile(), tile(name="b")])
    m = ir.Var("m", mask.type)
    assert dims(create_op_call("tile.sel", [m, tile(), tile(name="b"), tile(name="tmp")]).type.shape) == [64, 64]
    assert create_op_call("tile.sels", [m, tile(), tile(name="tmp"), 0.0]).type.dtype is FP32
    with pytest.raises(TypeCheckError, match="packed UINT8 mask"):
        create_op_call("tile.sel", [tile(dtype=UINT8), tile(), tile(name="b"), tile(name="tmp")])


def test_matmul_family():
    lhs = tile((64, 32), FP16, space=MemorySpace.Left, name="l")
    rhs = tile((32, 128), FP16, space=MemorySpace.Right, name="r")
    c = create_op_call("tile.matmul", [lhs, rhs])
    assert dims(c.type.shape) == [64, 128] and c.type.dtype is FP32 and c.type.memory_space is MemorySpace.Acc
    assert get_op("tile.matmul").affinity == "cube"
    acc = ir.Var("acc", c.type)
    assert create_op_call("tile.matmul_acc", [acc, lhs, rhs]).type.dtype is FP32
    assert get_op("tile.matmul_acc").reuses_input == 0
    bias = tile((1, 128), FP32, space=MemorySpace.Bias, name="bias")
    assert create_op_call("tile.matmul_bias", [lhs, rhs, bias]).type.memory_space is MemorySpace.Acc
    for wrong in ((2, 128), (1, 64), (64, 128)):  # bias must be exactly [1, N]
        with pytest.raises(TypeCheckError, match="'bias' must be"):
            create_op_call("tile.matmul_bias", [lhs, rhs, tile(wrong, FP32, space=MemorySpace.Bias, name="bias")])
    with pytest.raises(TypeCheckError, match="must be in Left"):       # Vec / Mat operands are moved by inference
        create_op_call("tile.matmul", [tile((64, 32), FP16, space=MemorySpace.Acc), rhs])
    with pytest.raises(TypeCheckError, match="inner dimensions"):
        create_op_call("tile.matmul", [lhs, tile((64, 128), FP16, space=MemorySpace.Right)])
    with pytest.raises(TypeCheckError, match="must be FP32"):
        create_op_call("tile.matmul_acc", [tile((64, 128), FP16, space=MemorySpace.Acc), lhs, rhs])
    i8 = create_op_call("tile.matmul", [tile((16, 32), DataType.INT8, space=MemorySpace.Left),
                                        tile((32, 16), DataType.INT8, space=MemorySpace.Right)])
    assert i8.type.dtype is INT32


def test_concat_and_transpose_view():
    c = create_op_call("tile.concat", [tile((16, 32)), tile((16, 64), name="b")])
    assert dims(c.type.shape) == [16, 96]
    with pytest.raises(TypeCheckError, match="same row count"):
        create_op_call("tile.concat", [tile((16, 32)), tile((8, 32), name="b")])
    k = tile((64, 32), FP16, valid=(64, 20), space=Mat, name="k")
    kt = create_op_call("tile.transpose_view", [k]).type
    assert dims(kt.shape) == [32, 64] and dims(kt.valid_shape) == [20, 64] and kt.memory_space is Mat
    assert (kt.tile_view.blayout, kt.tile_view.slayout) == (TileLayout.row_major, TileLayout.col_major)  # NZ → ZN


def test_expand_ops_accept_an_optional_scratch_tile():
    c = create_op_call("tile.row_expand_add", [tile(), tile(shape=(64, 1), name="v"), tile(name="tmp")])
    assert dims(c.type.shape) == [64, 64]


def test_a_static_gm_window_outside_its_tensor_is_a_compile_time_error():
    g = tensor((16, 64))
    create_op_call("tile.load", [g, [8, 0], [16, 64], [8, 64]])        # the valid part fits: a padded load
    with pytest.raises(TypeCheckError, match=r"tile.load: dim 0 window \[8, 24\) is outside the tensor extent 16"):
        create_op_call("tile.load", [g, [8, 0], [16, 64], [16, 64]])
    with pytest.raises(TypeCheckError, match=r"tile.store: dim 1 window \[32, 96\) is outside the tensor extent 64"):
        create_op_call("tile.store", [tile((16, 64)), [0, 32], g])
    create_op_call("tile.store", [tile((16, 64), valid=(16, 32)), [0, 32], g])   # only the valid part is written
    i = ir.Var("i", ScalarType(INDEX))
    create_op_call("tile.load", [g, [i, 0], [16, 64], [16, 64]])       # a symbolic offset is checked at run time
