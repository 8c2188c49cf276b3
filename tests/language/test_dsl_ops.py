"""The DSL op layer: unified dispatch, aliases, DSL defaults, scalar forms and errors."""

import pytest

from pypto import ir
from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.dtypes import FP16, FP32, INDEX, INT32
from pypto.ir.enums import CastMode, CmpType, MemorySpace
from pypto.ir.expr import BinaryExpr, Call, ConstFloat, ConstInt, UnaryExpr
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.language.ops import DSL_OP_PATHS, build_call, is_dsl_op

T = ir.Var("t", TensorType([128, 128], FP32))
OUT = ir.Var("out", TensorType([128, 128], FP32))
A = ir.Var("a", TileType([64, 64], FP32, memory_space=MemorySpace.Vec))
B = ir.Var("b", TileType([64, 64], FP32, memory_space=MemorySpace.Vec))
I = ir.Var("i", ScalarType(INDEX))
X = ir.Var("x", ScalarType(FP32))


def op_name(e):
    assert isinstance(e, Call)
    return e.op.name


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_unified_binary_dispatches_on_operand_kind(name):
    assert op_name(build_call(name, [A, B], {})) == f"tile.{name}"
    assert op_name(build_call(name, [T, T], {})) == f"tensor.{name}"
    assert op_name(build_call(name, [A, X], {})) == f"tile.{name}s"
    assert op_name(build_call(name, [T, 2.0], {})) == f"tensor.{name}s"


def test_scalar_lhs_of_commutative_op_moves_right():
    c = build_call("mul", [ConstFloat(2.0), A], {})
    assert op_name(c) == "tile.muls" and c.args[0] is A


def test_cmp_scalar_rhs_selects_cmps_and_keeps_kwarg():
    c = build_call("cmp", [A, 0.0], {"cmp_type": CmpType.GE})
    assert op_name(c) == "tile.cmps" and c.kwargs["cmp_type"] is CmpType.GE
    assert op_name(build_call("cmp", [A, B, 4], {})) == "tile.cmp"   # cmp_type given positionally


def test_scalar_scalar_gives_scalar_exprs():
    e = build_call("add", [I, ConstInt(1)], {})
    assert isinstance(e, BinaryExpr) and e.op == "add"
    assert build_call("min", [I, ConstInt(4)], {}).op == "min"
    assert build_call("max", [I, ConstInt(4)], {}).op == "max"
    assert build_call("maximum", [X, X], {}).op == "max"
    c = build_call("cast", [I, FP32], {})
    assert isinstance(c, UnaryExpr) and c.op == "cast" and c.type.dtype is FP32
    assert build_call("abs", [X], {}).op == "abs"
    assert build_call("div", [X, X], {}).op == "truediv" and build_call("div", [I, I], {}).op == "floordiv"
    d = build_call("scalar_add", [I, I], {"dtype": INT32})
    assert d.op == "add" and d.type.dtype is INT32


def test_min_max_on_tiles_are_elementwise():
    assert op_name(build_call("max", [A, B], {})) == "tile.maximum"
    assert op_name(build_call("min", [A, 1.0], {})) == "tile.minimums"


def test_explicit_family_paths():
    assert op_name(build_call("tile.add", [A, B], {})) == "tile.add"
    assert op_name(build_call("tensor.exp", [T], {})) == "tensor.exp"
    with pytest.raises(TypeCheckError, match="must be a Tile"):
        build_call("tile.exp", [T], {})


def test_load_fills_valid_shapes_and_accepts_reference_keywords():
    c = build_call("load", [T, [0, 0], [64, 64]], {})
    assert op_name(c) == "tile.load" and len(c.args) == 4
    assert [e.value for e in c.args[3].elements] == [64, 64]
    c = build_call("load", [T, [0, 0], [64, 64]], {"valid_shape": [64, 10], "target_memory": MemorySpace.Mat})
    assert [e.value for e in c.args[3].elements] == [64, 10] and c.type.memory_space is MemorySpace.Mat
    c = build_call("tile.load", [T, [0, 0], [64, 64], [32, 64]], {"target_memory": "Vec"})
    assert [e.value for e in c.type.valid_shape] == [32, 64]


def test_aliases():
    assert op_name(build_call("store", [A, [0, 0], OUT], {})) == "tile.store"
    assert op_name(build_call("move", [A], {"target_memory": MemorySpace.Mat})) == "tile.move"
    assert op_name(build_call("create_tile", [[16, 16]], {"dtype": FP16})) == "tile.create"
    assert op_name(build_call("full", [[16, 16]], {"dtype": FP16, "value": 1.0})) == "tensor.full"   # as the reference
    assert op_name(build_call("tile.full", [[16, 16]], {"dtype": FP16, "value": 1.0})) == "tile.full"
    for path in ("create_tensor", "tensor.create"):
        c = build_call(path, [[64, 64], FP32], {})
        assert op_name(c) == "tensor.create" and c.kwargs["dtype"] is FP32


def test_cast_defaults_and_positional_dtype():
    c = build_call("cast", [A, FP16], {})
    assert op_name(c) == "tile.cast" and c.kwargs == {"target_type": FP16, "mode": CastMode.round}
    assert build_call("cast", [A], {"target_type": INT32, "mode": "trunc"}).kwargs["mode"] is CastMode.trunc


def test_row_sum_takes_scratch_by_either_name():
    assert op_name(build_call("row_sum", [A, B], {})) == "tile.row_sum"
    assert op_name(build_call("row_sum", [A], {"tmp_tile": B})) == "tile.row_sum"
    assert op_name(build_call("row_sum", [T], {})) == "tensor.row_sum"
    with pytest.raises(TypeCheckError, match="missing argument 'tmp'") as e:
        build_call("row_sum", [A], {})
    assert "scratch" in e.value.hint


def test_shape_ops_and_element_access():
    assert op_name(build_call("slice", [T, [32, 32], [0, 0]], {"valid_shape": [16, 32]})) == "tensor.slice"
    assert op_name(build_call("reshape", [A, [32, 128]], {})) == "tile.reshape"
    assert op_name(build_call("transpose", [T, 0, 1], {})) == "tensor.transpose"
    assert op_name(build_call("assemble", [T, T, [0, 0]], {})) == "tensor.assemble"
    assert build_call("read", [T, [0, 1]], {}).type.dtype is FP32
    assert op_name(build_call("tensor.read", [T], {"offset": [0, 1]})) == "tensor.read"
    assert op_name(build_call("dim", [T, 0], {})) == "tensor.dim"
    assert op_name(build_call("fillpad", [A], {})) == "tile.fillpad"


def test_const():
    c = build_call("const", [ConstInt(3)], {"dtype": INT32})
    assert isinstance(c, ConstInt) and c.dtype is INT32
    f = build_call("const", [ConstFloat(0.5), FP16], {})
    assert isinstance(f, ConstFloat) and f.dtype is FP16


def test_unknown_op_suggests():
    with pytest.raises(TypeCheckError, match="unknown op 'pl.ad'") as e:
        build_call("ad", [A, B], {})
    assert "pl.add" in e.value.hint
    assert is_dsl_op("tile.max") and not is_dsl_op("tile.foo")
    assert not is_dsl_op("foo") and is_dsl_op("add") and is_dsl_op("tile.row_sum") and is_dsl_op("create_tensor")
    assert {"add", "tile.add", "tensor.add", "load", "cast", "min", "const"} <= DSL_OP_PATHS


def test_wrong_argument_kinds_are_named():
    with pytest.raises(TypeCheckError, match="first operand must be a Tensor or a Tile"):
        build_call("exp", [X], {})
    with pytest.raises(TypeCheckError, match="'rhs'"):
        build_call("add", [A, T], {})
    with pytest.raises(TypeCheckError, match="argument 'tile' must be a Tile"):
        build_call("move", [T], {"target_memory": MemorySpace.Mat})
    with pytest.raises(TypeCheckError, match="takes scalar operands"):
        build_call("scalar_add", [A, B], {})


def test_dsl_only_keywords():
    assert op_name(build_call("create_tensor", [[8, 8], FP32], {"manual_dep": False})) == "tensor.create"
    with pytest.raises(UnsupportedError, match="manual_dep"):
        build_call("create_tensor", [[8, 8], FP32], {"manual_dep": True})
    with pytest.raises(TypeCheckError, match="unexpected keyword"):
        build_call("add", [A, B], {"bogus": 1})


def test_reference_keyword_spellings():
    assert op_name(build_call("row_sum", [], {"tile": A, "tmp_tile": B})) == "tile.row_sum"
    assert op_name(build_call("tensor.row_sum", [], {"input": T})) == "tensor.row_sum"
    assert op_name(build_call("row_expand_mul", [A], {"row_vec": ir.Var("r", TileType([64, 1], FP32))})) \
        == "tile.row_expand_mul"
    assert op_name(build_call("tensor.read", [], {"tensor": T, "indices": [0, 0]})) == "tensor.read"
    assert op_name(build_call("fillpad", [A], {"pad_value": "max"})) == "tile.fillpad"
    c = build_call("tile.alloc", [MemorySpace.Vec, 256], {})
    assert c.kwargs == {"memory_space": MemorySpace.Vec, "size": 256, "addr": -1, "pinned": False}
    assert op_name(build_call("store", [A, [0, 0], OUT], {"shapes": None})) == "tile.store"


def test_system_and_identity_ops():
    c = build_call("system.bar_v", [], {})
    assert op_name(c) == "system.bar_v" and is_dsl_op("system.fence")
    idx = build_call("tile.get_block_idx", [], {})
    assert op_name(idx) == "tile.get_block_idx" and idx.type.dtype is INDEX


def test_op_calls_print_and_parse_back():
    import pypto.language as pl

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[128, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [64, 64])
            u = pl.load(a, [64, 0], [64, 64], valid_shapes=[64, 40])
            tmp = pl.create_tile([64, 64], dtype=pl.FP32)
            s = pl.maximum(pl.mul(pl.add(t, u), 2.0), 0.0)
            e = pl.exp(s)
            m = pl.row_expand_div(e, pl.row_sum(e, tmp))
            c = pl.cast(pl.cast(m, pl.FP16, mode="rint"), pl.FP32)
            mk = pl.cmp(c, t, cmp_type=pl.CmpType.GT)
            v = pl.slice(pl.fillpad(u), [32, 64], [0, 0])
            y = pl.expands(t, pl.tile.read(v, [0, 1]))
            w = pl.reshape(pl.reshape(pl.transpose(y, 0, 1), [32, 128]), [64, 64])
            out = pl.store(w, [0, 0], out)
            return out

    text = P.as_python()
    assert "pl.tile.cmp(" in text and "mode=pl.CastMode.rint" in text and "valid_shape=[64, 8]" in text
    ir.assert_structural_equal(P, pl.parse(text))


def test_bitwise_and_matmul_dispatch():
    I32 = ir.Var("i32", TileType([64, 64], INT32, memory_space=MemorySpace.Vec))
    assert op_name(build_call("and_", [I32, I32], {})) == "tile.and_"
    assert op_name(build_call("and_", [I32, 3], {})) == "tile.ands"
    assert op_name(build_call("xor", [I32, 3, I32], {})) == "tile.xors"
    L = ir.Var("l", TileType([64, 32], FP16, memory_space=MemorySpace.Left))
    R = ir.Var("r", TileType([32, 64], FP16, memory_space=MemorySpace.Right))
    assert op_name(build_call("matmul", [L, R], {"out_dtype": FP32, "a_trans": False})) == "tile.matmul"
    with pytest.raises(TypeCheckError, match="out_dtype"):
        build_call("matmul", [L, R], {"out_dtype": FP16})
    with pytest.raises(UnsupportedError, match="a_trans"):
        build_call("matmul", [L, R], {"a_trans": True})
    TA = ir.Var("ta", TensorType([64, 32], FP16))
    TB = ir.Var("tb", TensorType([64, 32], FP16))
    c = build_call("matmul", [TA, TB], {"b_trans": True, "out_dtype": FP32})
    assert op_name(c) == "tensor.matmul" and c.type.dtype is FP32


def test_explicit_unknown_and_tile_namespace_min_max():
    with pytest.raises(TypeCheckError, match="unknown op 'pl.tile.ad'") as e:
        build_call("tile.ad", [A, B], {})
    assert "pl.tile.add" in e.value.hint
    assert build_call("tile.max", [I, ConstInt(3)], {}).op == "max"          # the reference's scalar max
    assert op_name(build_call("tile.min", [A, B], {})) == "tile.minimum"


def test_fillpad_numeric_pad_values():
    from pypto.ir.enums import PadValue
    assert build_call("fillpad", [A], {"pad_value": 0}).kwargs["pad_value"] is PadValue.zero
    assert build_call("fillpad", [A, ConstInt(0)], {}).kwargs["pad_value"] is PadValue.zero
    assert build_call("fillpad", [A], {"pad_value": float("-inf")}).kwargs["pad_value"] is PadValue.min
    with pytest.raises(UnsupportedError, match="pad_value=1.5"):
        build_call("fillpad", [A], {"pad_value": 1.5})
