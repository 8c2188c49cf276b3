"""ir.IRBuilder: programs built statement by statement equal the same programs written in the DSL,
and misuse (nested functions, unbalanced loops, statements outside a function) is a pypto error."""

import pytest

import pypto.language as pl
from pypto import ir, passes
from pypto.errors import PyptoError
from pypto.ir.dtypes import FP32, INDEX, INT64
from pypto.ir.op import tensor as tensor_ops
from pypto.ir.op import tile as tile_ops

VEC64 = ir.TensorType([64], FP32)


def _built_double():
    """kernel(x) = x + x in tensor ops, called from an orchestrator: built with the IRBuilder."""
    ib = ir.IRBuilder()
    with ib.program("double") as prog:
        kernel_ref = prog.declare_function("kernel")
        with ib.function("kernel", type=ir.FunctionType.InCore) as k:
            x = k.param("x", VEC64)
            k.return_type(VEC64)
            ib.return_stmt(ib.let("y", tensor_ops.add(x, x)))
        prog.add_function(k.get_result())
        with ib.function("main", type=ir.FunctionType.Orchestration) as m:
            a = m.param("a", VEC64)
            m.return_type(VEC64)
            r = ib.let("r", ir.Call(kernel_ref, [a], ir.Span.unknown()))  # typed when the program closes
            ib.return_stmt(r)
        prog.add_function(m.get_result())
    return prog.get_result()


@pl.program
class WrittenDouble:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        r: pl.Tensor[[64], pl.FP32] = self.kernel(a)
        return r


def test_built_program_equals_the_dsl_program():
    built = _built_double()
    assert [f.name for f in built.functions.values()] == ["kernel", "main"]
    ir.assert_structural_equal(built, WrittenDouble)


def test_built_program_runs_through_a_pass():
    converted = passes.convert_tensor_to_tile_ops()(_built_double())
    ir.assert_structural_equal(converted, passes.convert_tensor_to_tile_ops()(WrittenDouble))
    ops = [s.value.op.name for s in ir.flatten_to_stmts(converted.get_function("kernel").body)
           if isinstance(s, ir.AssignStmt) and isinstance(s.value.op, ir.Op)]
    assert ops == ["tile.load", "tile.add", "tile.store"]


def test_param_directions_and_function_type_are_recorded():
    ib = ir.IRBuilder()
    with ib.function("k", type=ir.FunctionType.InCore) as f:
        x = f.param("x", VEC64)
        out = f.param("out", VEC64, direction=ir.ParamDirection.Out)
        f.return_type(VEC64)
        t = ib.let("t", tile_ops.load(x, [0], [64]))
        ib.return_stmt(ib.let("stored", tile_ops.store(t, [0], out)))
    func = f.get_result()
    assert func.func_type is ir.FunctionType.InCore
    assert func.param_directions == (ir.ParamDirection.In, ir.ParamDirection.Out)
    assert func.params[1] is out
    assert isinstance(func.body, ir.SeqStmts) and len(func.body.stmts) == 3


def test_for_loop_with_a_carried_sum():
    ib = ir.IRBuilder()
    scalar = ir.ScalarType(INT64)
    with ib.function("sum_below") as f:
        n = f.param("n", scalar)
        f.return_type(scalar)
        i = ib.var("i", scalar)
        with ib.for_loop(i, 0, n, 1) as loop:
            acc = loop.iter_arg("acc", ir.ConstInt(0, INT64))
            total = loop.return_var("total")
            ib.emit(ir.YieldStmt([ir.Add(acc, i, INT64, ir.Span.unknown())]))
        assert loop.output() is total and loop.outputs() == [total]
        ib.return_stmt(total)
    loop_stmt = f.get_result().body.stmts[0]
    assert isinstance(loop_stmt, ir.ForStmt)
    assert loop_stmt.iter_args == (acc,) and loop_stmt.return_vars == (total,)
    assert total.type == scalar or total.type.dtype is INT64  # the return var takes the iter_arg's type
    assert isinstance(loop_stmt.body.stmts[-1].values[0], ir.Add)


def test_if_with_else_and_a_phi_value():
    ib = ir.IRBuilder()
    scalar = ir.ScalarType(INDEX)
    with ib.function("pick") as f:
        a = f.param("a", scalar)
        b = f.param("b", scalar)
        f.return_type(scalar)
        with ib.if_stmt(ir.Gt(a, b, None, ir.Span.unknown())) as br:
            phi = br.return_var("bigger", scalar)
            ib.emit(ir.YieldStmt([a]))
            br.else_()
            ib.emit(ir.YieldStmt([b]))
        ib.return_stmt(br.output())
    if_stmt = f.get_result().body.stmts[0]
    assert isinstance(if_stmt, ir.IfStmt) and if_stmt.return_vars == (phi,)
    assert if_stmt.then_body.stmts[0].values == (a,) and if_stmt.else_body.stmts[0].values == (b,)


def test_nested_function_is_an_error():
    ib = ir.IRBuilder()
    with pytest.raises(PyptoError, match="already inside function 'outer'"):
        with ib.function("outer"):
            with ib.function("inner"):
                pass


def test_loop_with_unmatched_return_vars_is_an_error():
    ib = ir.IRBuilder()
    scalar = ir.ScalarType(INDEX)
    with ib.function("f"):
        i = ib.var("i", scalar)
        with pytest.raises(PyptoError, match="1 iter_args but 0 return_vars"):
            with ib.for_loop(i, 0, 4) as loop:
                loop.iter_arg("c", 0)
                ib.emit(ir.YieldStmt([i]))


def test_statements_need_an_open_function():
    ib = ir.IRBuilder()
    with pytest.raises(PyptoError, match="only inside a function"):
        ib.return_stmt()


def test_result_is_unavailable_until_the_block_ends():
    ib = ir.IRBuilder()
    with ib.function("f") as f:
        with pytest.raises(PyptoError, match="before its `with` block ended"):
            f.get_result()
    assert f.get_result().name == "f"
