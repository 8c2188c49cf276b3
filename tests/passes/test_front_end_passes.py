"""InlineFunctions, Simplify, NormalizeStmtStructure and FlattenCallExpr: Before / Expected."""

import pytest

from pypto import ir
from pypto.errors import ValueCheckError
from pypto.ir import (AssignStmt, BinaryExpr, Call, ConstInt, EvalStmt, ForStmt, FunctionType as FT, GlobalVar,
                      IfStmt, Program, ReturnStmt, SeqStmts, TileType, Var)
from pypto.ir.dtypes import FP32, INT32
from pypto.pypto_core import passes
from pass_irb import IDX, call, func, let, op, tensor

C = ConstInt


# -- InlineFunctions ---------------------------------------------------------------
def _inline_program():
    a = Var("a", tensor([16]))
    t, s0 = let("t", op("tensor.add", a, a))
    helper = func("helper", [a], [tensor([16])], [s0, ReturnStmt([t])], FT.Inline)
    x = Var("x", tensor([16]))
    y, s1 = let("y", call("helper", tensor([16]), x))
    z, s2 = let("z", call("helper", tensor([16]), y))
    main = func("main", [x], [tensor([16])], [s1, s2, ReturnStmt([z])], FT.Opaque)
    return Program([helper, main], "P")


def test_inline_functions_splices_and_removes_callee():
    x = Var("x", tensor([16]))
    t1, s0 = let("t", op("tensor.add", x, x))
    y = Var("y", tensor([16]))
    t2, s2 = let("t", op("tensor.add", y, y))
    z = Var("z", tensor([16]))
    expected = Program([func("main", [x], [tensor([16])],
                             [s0, AssignStmt(y, t1), s2, AssignStmt(z, t2), ReturnStmt([z])])], "P")
    after = passes.inline_functions()(_inline_program())
    assert list(after.functions) == ["main"]
    ir.assert_structural_equal(after, expected)


def test_inline_cycle_is_rejected():
    a = Var("a", tensor([16]))
    r, s = let("r", call("g", tensor([16]), a))
    f = func("f", [a], [tensor([16])], [s, ReturnStmt([r])], FT.Inline)
    b = Var("b", tensor([16]))
    r2, s2 = let("r", call("f", tensor([16]), b))
    g = func("g", [b], [tensor([16])], [s2, ReturnStmt([r2])], FT.Inline)
    with pytest.raises(ValueCheckError, match="cycle: (f -> g -> f|g -> f -> g)"):
        passes.inline_functions()(Program([f, g], "P"))


# -- Simplify -------------------------------------------------------------------------
def test_simplify_folds_and_propagates_into_shapes():
    # k = 8 * 4; n = k // 3 + k % 5 (== 10 + 2); t = tile.create([k, 16]) ; return n
    k, n = Var("k", IDX), Var("n", IDX)
    s0 = AssignStmt(k, BinaryExpr("mul", C(8), C(4)))
    s1 = AssignStmt(n, BinaryExpr("add", BinaryExpr("floordiv", k, C(3)), BinaryExpr("floormod", k, C(5))))
    t = Var("t", TileType([k, 16], FP32, memory_space=ir.MemorySpace.Vec))
    s2 = AssignStmt(t, op("tile.create", [k, 16], dtype=FP32))
    before = Program([func("f", [], [IDX], [s0, s1, s2, ReturnStmt([n])])], "P")
    t2 = Var("t", TileType([32, 16], FP32, memory_space=ir.MemorySpace.Vec))
    expected = Program([func("f", [], [IDX], [AssignStmt(t2, op("tile.create", [32, 16], dtype=FP32)),
                                              ReturnStmt([C(12)])])], "P")
    after = passes.simplify()(before)
    ir.assert_structural_equal(after, expected)
    assert after["f"].body.stmts[0].var.type.static_shape() == (32, 16)


def test_simplify_floor_semantics_for_negative_operands():
    n = Var("n", IDX)
    before = Program([func("f", [], [IDX], [AssignStmt(n, BinaryExpr("floordiv", C(-7), C(2))),
                                            ReturnStmt([BinaryExpr("floormod", n, C(3))])])], "P")
    ret = passes.simplify()(before)["f"].body.stmts[-1]
    assert ret.values[0].value == (-7 // 2) % 3 == 2


def test_simplify_keeps_dynamic_values():
    m = Var("m", IDX)
    r = Var("r", IDX)
    p = Program([func("f", [m], [IDX], [AssignStmt(r, BinaryExpr("add", m, C(0))), ReturnStmt([r])])], "P")
    out = passes.simplify()(p)["f"]
    assert out.body.stmts[0].value is out.params[0]  # m + 0 → m, r kept (it is returned)


# -- NormalizeStmtStructure ------------------------------------------------------------
def test_normalize_flattens_nested_seq_and_wraps_bodies():
    a, b, i = Var("a", IDX), Var("b", IDX), Var("i", IDX)
    s_a, s_b = AssignStmt(a, C(1)), AssignStmt(b, C(2))
    loop = ForStmt(i, C(0), C(2), C(1), body=EvalStmt(a))
    before = Program([func("f", [], [], [SeqStmts([s_a, SeqStmts([s_b])]), loop])], "P")
    expected = Program([func("f", [], [], [s_a, s_b, ForStmt(i, C(0), C(2), C(1), body=SeqStmts([EvalStmt(a)]))])],
                       "P")
    after = passes.normalize_stmt_structure()(before)
    ir.assert_structural_equal(after, expected)
    assert not ir.verifier.verify_property("NormalizedStmtStructure", after)
    assert ir.verifier.verify_property("NormalizedStmtStructure", before)


# -- FlattenCallExpr -------------------------------------------------------------------
def test_flatten_hoists_nested_calls():
    x = Var("x", tensor([16]))
    inner = op("tensor.add", x, x)
    y, s0 = let("y", op("tensor.mul", inner, inner))
    before = Program([func("f", [x], [tensor([16])], [s0, ReturnStmt([y])])], "P")
    t1, h1 = let("t", op("tensor.add", x, x))
    t2, h2 = let("t", op("tensor.add", x, x))
    x2 = before["f"].params[0]
    y2, s1 = let("y", op("tensor.mul", t1, t2))
    expected = Program([func("f", [x2], [tensor([16])], [h1, h2, s1, ReturnStmt([y2])])], "P")
    after = passes.flatten_call_expr()(before)
    ir.assert_structural_equal(after, expected)
    assert not ir.verifier.verify_property("NoNestedCalls", after)
    assert ir.verifier.verify_property("NoNestedCalls", before)


def test_flatten_hoists_call_out_of_if_condition():
    x = Var("x", tensor([16], INT32))
    read = op("tensor.read", x, [0])
    cond = BinaryExpr("gt", read, ir.const(0, INT32))
    y = Var("y", IDX)
    before = Program([func("f", [x], [], [IfStmt(cond, SeqStmts([AssignStmt(y, C(1))]))])], "P")
    after = passes.flatten_call_expr()(before)
    stmts = after["f"].body.stmts
    assert isinstance(stmts[0], AssignStmt) and stmts[0].value.op.name == "tensor.read"
    assert stmts[1].condition.lhs is stmts[0].var


# -- the same passes on parser-produced programs ------------------------------------
import pypto.language as pl  # noqa: E402


def test_dsl_inline_function_is_spliced():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.Inline)
        def double(self, a: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            t: pl.Tensor[[16], pl.FP32] = pl.add(a, a)
            return t

        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y = self.double(x)
            return y

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            t: pl.Tensor[[16], pl.FP32] = pl.add(x, x)
            y: pl.Tensor[[16], pl.FP32] = t
            return y

    ir.assert_structural_equal(passes.inline_functions()(Before), Expected)


def test_dsl_simplify_makes_tile_shapes_static():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 16], pl.FP32]):
            rows: pl.Scalar[pl.INDEX] = 64
            half: pl.Scalar[pl.INDEX] = rows // 2
            u = pl.load(x, [half, 0], [half, 16])

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 16], pl.FP32]):
            u: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [32, 0], [32, 16])

    after = passes.simplify()(Before)
    ir.assert_structural_equal(after, Expected)
    assert passes.simplify()(after) is after


def test_flatten_hoists_call_out_of_loop_init_value():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            for i, (a,) in pl.range(2, init_values=(pl.add(x, x),)):
                b: pl.Tensor[[16], pl.FP32] = pl.add(a, x)
                a_rv = pl.yield_(b)
            return a_rv

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            t: pl.Tensor[[16], pl.FP32] = pl.add(x, x)
            for i, (a,) in pl.range(2, init_values=(t,)):
                b: pl.Tensor[[16], pl.FP32] = pl.add(a, x)
                a_rv = pl.yield_(b)
            return a_rv

    ir.assert_structural_equal(passes.flatten_call_expr()(Before), Expected)
