"""The LoweringBuilder's structured control flow (EmitFor / EmitForReduce / EmitIf / EmitIfExpr),
its shared temp counter, the read-only rule table, and the pass's tuple-alias folding."""

import types

import pytest

import pypto.language as pl
from pypto.ir.dtypes import BOOL, FP32, INDEX
from pypto.ir.enums import FunctionType
from pypto.ir.equality import assert_structural_equal
from pypto.ir.expr import BinaryExpr, Call, ConstInt, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import has_op
from pypto.ir.printer import python_print
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts
from pypto.ir.types import ScalarType, TileType
from pypto.ir.visitor import collect
from pypto.passes.context import PassContext
from pypto.passes.lower_composite_ops.builder import LoweringBuilder, TempCounter
from pypto.passes.lower_composite_ops.rules import RULES
from pypto.passes.lower_composite_ops import lower_composite_ops


def test_control_flow_constructs_round_trip_and_share_one_counter():
    t = TileType([16, 16], FP32)
    x, n = Var("x", t), Var("n", ScalarType(INDEX))
    b = LoweringBuilder("y", TempCounter())
    acc = b.emit_for_reduce("i", 0, 4, 1, x, lambda body, i, a: body.bind("step", body.adds(a, 1.0)))
    cond = BinaryExpr("lt", n, ConstInt(3))
    chosen = b.emit_if_expr(cond, lambda then: then.bind("neg", then.muls(acc, -1.0)),
                            lambda other: other.bind("dbl", other.add(acc, acc)))
    b.emit_for("j", 0, 2, 1, lambda body, j: body.emit_if(BinaryExpr("eq", j, ConstInt(0)),
                                                           lambda then: then.bind("probe", then.muls(x, 2.0))))
    stmts = b.take_stmts()
    assert [type(s) for s in stmts] == [ForStmt, IfStmt, ForStmt] and b.take_stmts() == []
    defined = [s.var.name_hint for s in collect(SeqStmts(stmts), lambda s: isinstance(s, AssignStmt))]
    defined += [stmts[0].iter_args[0].name_hint, acc.name_hint, chosen.name_hint]
    assert len(defined) == 7 and len(set(defined)) == 7 and all(nm.startswith("y__") for nm in defined)
    body = SeqStmts(stmts + [ReturnStmt([chosen])])
    prog = Program([Function("f", [x, n], [t], body, func_type=FunctionType.InCore)], "P")
    assert_structural_equal(pl.parse(python_print(prog)), prog)
    loop = stmts[0]
    assert len(loop.iter_args) == 1 and loop.iter_args[0].init_value is x and loop.return_vars[0] is acc
    assert stmts[1].return_vars[0] is chosen


def test_rule_table_is_read_only_and_names_registered_ops():
    assert isinstance(RULES, types.MappingProxyType)
    with pytest.raises(TypeError):
        RULES["tile.exp"] = None
    assert {n for n in RULES if not n.startswith("pld.tensor.")} == {"tile.sin", "tile.cos", "tile.select", "tile.tquant_mx"}
    assert all(has_op(name) for name in RULES)


def test_projections_of_an_aliased_lowered_tuple_fold():
    """`p2 = pair; d = p2[0]`: the alias is tracked, the projection folds to the rule's element."""
    tt = TileType([16, 64], pl.FP16)
    src = Var("src", tt)
    from pypto.ir.ops.registry import create_op_call
    call = create_op_call("tile.tquant_mx", [src], {"group_axis": 1})
    pair, alias = Var("pair", call.type), Var("p2", call.type)
    data, scale = Var("d", call.type.types[0]), Var("s", call.type.types[1])
    body = SeqStmts([AssignStmt(pair, call), AssignStmt(alias, pair), AssignStmt(data, TupleGetItem(alias, 0)),
                     AssignStmt(scale, TupleGetItem(pair, 1)), ReturnStmt([data, scale])])
    prog = Program([Function("f", [src], list(call.type.types), body, func_type=FunctionType.InCore)], "P")
    with PassContext(platform="a5"):
        after = lower_composite_ops()(prog)
    stmts = after.functions["f"].body.stmts
    assert not any(isinstance(s, AssignStmt) and s.var in (pair, alias) for s in stmts)
    by_var = {s.var: s.value for s in stmts if isinstance(s, AssignStmt)}
    assert isinstance(by_var[data], Var) and by_var[data].name_hint.startswith("pair__data")
    assert isinstance(by_var[scale], Var) and by_var[scale].name_hint.startswith("pair__scale")
