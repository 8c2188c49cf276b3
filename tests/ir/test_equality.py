"""Structural equality and hashing: names ignored, binding sites auto-mapped, first difference reported."""

import pytest

from pypto import ir
from pypto.ir.dtypes import FP32, INDEX, INT32


def _kernel(name_a="a", name_t="t", dtype=FP32, extent=64):
    a = ir.Var(name_a, ir.TensorType([extent], dtype))
    out = ir.Var("out", ir.TensorType([extent], dtype))
    load = ir.create_op_call("tile.load", [a, [0], [extent], [extent]])
    t = ir.Var(name_t, load.type)
    s = ir.Var("s", ir.TileType([extent], dtype, memory_space=ir.Mem.Vec))
    add = ir.create_op_call("tile.add", [t, t])
    store = ir.create_op_call("tile.store", [s, [0], out])
    r = ir.Var("r", store.type)
    body = ir.SeqStmts([ir.AssignStmt(t, load), ir.AssignStmt(s, add), ir.AssignStmt(r, store), ir.ReturnStmt([r])])
    return ir.Function("k", [a, out], [store.type], body, ir.FunctionType.InCore,
                       param_directions=[ir.ParamDirection.In, ir.ParamDirection.Out])


def test_names_are_ignored_and_vars_auto_mapped():
    f1 = _kernel("a", "t")
    f2 = _kernel("x", "tile_x")
    assert ir.structural_equal(f1, f2)
    assert ir.structural_hash(f1) == ir.structural_hash(f2)


def test_dtype_difference_is_reported_with_a_path():
    with pytest.raises(AssertionError, match=r"params\[0\].*dtype|dtype"):
        ir.assert_structural_equal(_kernel(dtype=FP32), _kernel(dtype=INT32))
    assert ir.structural_hash(_kernel(extent=64)) != ir.structural_hash(_kernel(extent=32))


def test_var_mapping_must_be_a_bijection():
    x = ir.Var("x", ir.ScalarType(INDEX))
    y = ir.Var("y", ir.ScalarType(INDEX))
    lhs = ir.SeqStmts([ir.AssignStmt(x, ir.ConstInt(1)), ir.AssignStmt(y, ir.BinaryExpr("add", x, x))])
    x2 = ir.Var("x", ir.ScalarType(INDEX))
    y2 = ir.Var("y", ir.ScalarType(INDEX))
    rhs_ok = ir.SeqStmts([ir.AssignStmt(x2, ir.ConstInt(1)), ir.AssignStmt(y2, ir.BinaryExpr("add", x2, x2))])
    rhs_bad = ir.SeqStmts([ir.AssignStmt(x2, ir.ConstInt(1)), ir.AssignStmt(y2, ir.BinaryExpr("add", x2, y2))])
    assert ir.structural_equal(lhs, rhs_ok)
    assert not ir.structural_equal(lhs, rhs_bad)


def test_default_views_are_canonical():
    a = ir.TileType([16, 16], FP32, tile_view=ir.TileView(valid_shape=[16, 16]), memory_space=ir.Mem.Vec)
    b = ir.TileType([16, 16], FP32, memory_space=ir.Mem.Vec)
    assert a.tile_view is None and ir.structural_equal(a, b)
    c = ir.TileType([16, 16], FP32, tile_view=ir.TileView(valid_shape=[8, 16]), memory_space=ir.Mem.Vec)
    assert not ir.structural_equal(c, b)


def test_nodes_are_immutable():
    x = ir.Var("x", ir.ScalarType(INDEX))
    with pytest.raises(AttributeError, match="immutable"):
        x.name_hint = "y"
    assert x.replace(name_hint="y").name_hint == "y" and x.name_hint == "x"


def test_fp32_literals_are_rounded_to_float32():
    assert ir.ConstFloat(0.1).value == float(__import__("numpy").float32(0.1))


def test_free_vars_must_be_the_same_object_unless_auto_mapping():
    x = ir.Var("x", ir.ScalarType(INDEX))
    y = ir.Var("y", ir.ScalarType(INDEX))
    z = ir.Var("z", ir.ScalarType(INDEX))
    x_plus_x = ir.BinaryExpr("add", x, x)
    y_plus_y = ir.BinaryExpr("add", y, y)
    assert not ir.structural_equal(x_plus_x, y_plus_y)
    assert not ir.structural_equal(x, y, enable_auto_mapping=False)
    assert ir.structural_equal(x_plus_x, ir.BinaryExpr("add", x, x))
    assert ir.structural_equal(x_plus_x, y_plus_y, enable_auto_mapping=True)
    assert not ir.structural_equal(x_plus_x, ir.BinaryExpr("add", y, z), enable_auto_mapping=True)
    with pytest.raises(AssertionError, match="different objects"):
        ir.assert_structural_equal(ir.TensorType([x], FP32), ir.TensorType([y], FP32))
    ir.assert_structural_equal(ir.TensorType([x], FP32), ir.TensorType([y], FP32), enable_auto_mapping=True)


def test_binding_sites_map_even_without_auto_mapping():
    m1, m2 = ir.Var("M", ir.ScalarType(INDEX)), ir.Var("M", ir.ScalarType(INDEX))
    lhs = ir.AssignStmt(ir.Var("a", ir.TensorType([m1], FP32)), ir.ConstInt(0))
    rhs = ir.AssignStmt(ir.Var("b", ir.TensorType([m2], FP32)), ir.ConstInt(0))
    assert ir.structural_equal(lhs, rhs)     # the target is a DEF field: it and the M in its type map
def test_a_one_statement_body_equals_that_statement_with_or_without_a_seqstmts():
    """The reference's builder drops the SeqStmts around a one-statement body; pypto's parser keeps it.
    Both mean the same body, so they compare (and hash) equal; two statements never equal one."""
    from pypto.ir.equality import structural_hash
    from pypto.ir.expr import ConstInt, Var
    from pypto.ir.stmt import AssignStmt, SeqStmts
    from pypto.ir.types import ScalarType
    from pypto.ir.dtypes import INT32
    x = Var("x", ScalarType(INT32))
    one = AssignStmt(x, ConstInt(1))
    assert ir.structural_equal(SeqStmts([one]), one)
    assert ir.structural_equal(one, SeqStmts([SeqStmts([one])]))
    assert structural_hash(SeqStmts([one])) == structural_hash(one)
    assert not ir.structural_equal(SeqStmts([one, one]), one)


def test_a_default_tile_view_equals_no_view():
    t_none = ir.TileType([16, 16], FP32, memory_space=ir.Mem.Vec)
    t_default = t_none.replace(tile_view=ir.TileView())
    assert ir.structural_equal(t_none, t_default)
    from pypto.ir.equality import structural_hash
    assert structural_hash(t_none) == structural_hash(t_default)
    nz = ir.TileView(blayout=ir.TileLayout.col_major, slayout=ir.TileLayout.row_major)
    assert not ir.structural_equal(t_none, t_none.replace(tile_view=nz))


def test_a_void_functions_closing_bare_return_is_implied():
    from pypto.ir.stmt import AssignStmt, IfStmt, ReturnStmt, SeqStmts
    from pypto.ir.types import ScalarType
    x = ir.Var("x", ScalarType(INT32))
    one = AssignStmt(x, ir.ConstInt(1))
    with_return = ir.Function("f", [], [], SeqStmts([one, ReturnStmt([])]), ir.FunctionType.InCore)
    without = ir.Function("f", [], [], SeqStmts([one]), ir.FunctionType.InCore)
    assert ir.structural_equal(with_return, without)
    # an early return inside a branch is control flow, not an implied tail
    flag = ir.Var("flag", ScalarType(ir.dtypes.BOOL))
    early = ir.Function("f", [flag], [], SeqStmts([IfStmt(flag, SeqStmts([ReturnStmt([])]), None), one]),
                        ir.FunctionType.InCore)
    plain = ir.Function("f", [flag], [], SeqStmts([IfStmt(flag, SeqStmts([]), None), one]), ir.FunctionType.InCore)
    assert not ir.structural_equal(early, plain)
