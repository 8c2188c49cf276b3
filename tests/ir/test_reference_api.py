"""The reference's spellings on pypto's IR: positional constructors, Span / Var accessors, integer enums,
list-comparable shapes, the backend singleton, passes.<factory>(), op builders and UnrollLoops."""

import pytest

import pypto
import pypto.language as pl
import pypto.language.distributed as pld
from pypto import backend, ir, passes
from pypto.errors import PyptoError
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.op import pld as pld_ops
from pypto.ir.op import tensor as tensor_ops
from pypto.ir.op import tile_ops


def test_function_accepts_the_reference_positional_order_and_param_pairs():
    span = ir.Span("k.py", 3, 5)
    x = ir.Var("x", ir.TensorType([8], FP32), span)
    out = ir.Var("out", ir.TensorType([8], FP32), span)
    body = ir.ReturnStmt([out], span)
    f = ir.Function("k", [x, (out, ir.ParamDirection.Out)], [out.type], body, span, ir.FunctionType.InCore,
                    attrs={"split": ir.SplitMode.UP_DOWN})
    assert f.span is span and f.func_type is ir.FunctionType.InCore
    assert f.param_directions == (ir.ParamDirection.In, ir.ParamDirection.Out)
    assert f.split is ir.SplitMode.UP_DOWN
    own = ir.Function("k", [x, out], [out.type], body, ir.FunctionType.InCore,
                      param_directions=[ir.ParamDirection.In, ir.ParamDirection.Out],
                      attrs={"split": ir.SplitMode.UP_DOWN})
    ir.assert_structural_equal(f, own)


def test_for_stmt_call_and_returns_in_reference_order():
    span = ir.Span.unknown()
    i = ir.Var("i", ir.ScalarType(INDEX), span)
    body = ir.SeqStmts([ir.YieldStmt(span)], span)
    loop = ir.ForStmt(i, ir.ConstInt(0, INDEX, span), ir.ConstInt(4, INDEX, span), ir.ConstInt(1, INDEX, span), [],
                      body, [], span, ir.ForKind.Unroll, {"note": 1})
    assert loop.kind is ir.ForKind.Unroll and loop.attrs == {"note": 1} and loop.span is span
    assert ir.ReturnStmt(span).values == ()
    x = ir.Var("x", ir.TensorType([8], FP32), span)
    op = ir.get_op("tensor.exp")
    typed = ir.Call(op, [x], {}, {"tag": 2}, x.type, span)
    assert typed.type is x.type and typed.attrs == {"tag": 2} and typed.kwargs == {}
    assert ir.Call(op, [x], x.type, span).type is x.type
    assert ir.Call(ir.GlobalVar("g"), [x], span).span is span


def test_span_and_var_accessors():
    span = ir.Span("f.py", 12, 7)
    assert (span.begin_line, span.begin_column) == (12, 7) and span.is_valid()
    assert not ir.Span.unknown().is_valid()
    a, b = ir.Var("v", ir.ScalarType(INDEX)), ir.Var("v", ir.ScalarType(INDEX))
    assert a.unique_id != b.unique_id and a.unique_id == a.unique_id


def test_enums_behave_as_integers():
    assert int(pld.NotifyOp.AtomicAdd) == 0 and pld.WaitCmp.Ge == 1
    assert ir.CastMode.round == 2 and ir.CastMode.round != 3
    assert {ir.CastMode.rint: "r"}[ir.CastMode.rint] == "r"


def test_reference_op_names_resolve_to_pypto_ops():
    assert ir.get_op("pld.system.rank").name == "pld.rank"
    assert ir.get_op("pld.system.get_comm_ctx") is ir.get_op("pld.get_comm_ctx")


def test_backend_is_chosen_once_and_reaches_the_pass_context():
    backend.reset_for_testing()
    try:
        assert not backend.is_backend_configured()
        assert passes.PassContext().get_platform().name == "a2a3"
        backend.set_backend_type(backend.BackendType.Ascend950)
        backend.set_backend_type(backend.BackendType.Ascend950)  # the same choice again is fine
        assert passes.PassContext().get_platform().name == "a5"
        assert passes.PassContext(platform="a2a3").get_platform().name == "a2a3"
        with pytest.raises(PyptoError, match="already set"):
            backend.set_backend_type(backend.BackendType.Ascend910B)
    finally:
        backend.reset_for_testing()


def test_log_level_round_trips():
    before = pypto.get_log_level()
    try:
        pypto.set_log_level(pypto.LogLevel.ERROR)
        assert pypto.get_log_level() is pypto.LogLevel.ERROR
    finally:
        pypto.set_log_level(before)


def test_pass_factories_on_the_package_and_property_sets():
    assert passes.convert_to_ssa().get_name() == "ConvertToSSA"
    import pypto.passes.convert_to_ssa as module
    assert hasattr(module, "convert_to_ssa")  # the import still gives the module
    props = passes.IRPropertySet()
    props.insert(passes.IRProperty.SSAForm)
    assert props.contains(passes.IRProperty.SSAForm)
    checked = passes.run_verifier(props)(_unrolled_source())
    assert isinstance(checked, ir.Program)


def test_op_builders_build_typed_calls():
    x = ir.Var("x", ir.TensorType([4, 8], FP32))
    y = tensor_ops.add(x, x)
    assert y.op.name == "tensor.add" and y.type.static_shape() == (4, 8)
    t = tile_ops.load(x, [0, 0], [4, 8])
    assert t.op.name == "tile.load" and t.type.memory_space is ir.MemorySpace.Vec
    bits = tile_ops.load(ir.Var("m", ir.TensorType([4, 8], ir.DataType.INT32)), [0, 0], [4, 8])
    assert tile_ops.not_(bits).op.name == "tile.not_"
    with pytest.raises(PyptoError):
        tensor_ops.no_such_op(x)
    assert callable(pld_ops.tile.remote_load)


def _unrolled_source():
    return passes.convert_to_ssa()(UnrollMe)


@pl.program
class UnrollMe:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(x, [0], [16])
        for i in pl.unroll(3):
            t = pl.adds(t, pl.cast(i, pl.FP32))
        out = pl.store(t, [0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        out = self.k(x, out)
        return out


def test_unroll_loops_makes_one_copy_per_iteration():
    after = passes.unroll_loops()(_unrolled_source())
    body = ir.flatten_to_stmts(after.get_function("k").body)
    assert not any(isinstance(s, ir.ForStmt) for s in body)
    adds = [s for s in body if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call)
            and s.value.op.name == "tile.adds"]
    assert len(adds) == 3
    # each copy reads the previous copy's result and gets its own constant loop index
    assert adds[1].value.args[0] is adds[0].var and adds[2].value.args[0] is adds[1].var
    assert len({s.var for s in adds}) == 3


def test_unrolled_program_computes_the_same_numbers():
    import numpy as np
    from pypto.runtime import RunConfig, run
    x = np.arange(16, dtype=np.float32)
    unrolled = passes.unroll_loops()(_unrolled_source())
    for platform in ("a2a3sim", "a5sim"):
        out = np.zeros(16, dtype=np.float32)
        run(unrolled, x, out, config=RunConfig(platform=platform))
        np.testing.assert_array_equal(out, x + 0 + 1 + 2)


def test_codegen_and_operand_spellings():
    from pypto import codegen
    from pypto.codegen.pto import PTOCodegen
    assert codegen.PTOCodegen is PTOCodegen
    a, b = ir.Var("a", ir.ScalarType(INDEX)), ir.Var("b", ir.ScalarType(INDEX))
    m = ir.Max(a, b, INDEX, ir.Span.unknown())
    assert m.left is a and m.right is b


def test_op_builders_take_the_span_last_positionally():
    span = ir.Span("b.py", 4, 2)
    x = ir.Var("x", ir.TensorType([4], FP32))
    call = tensor_ops.add(x, x, span)
    assert call.span is span and len(call.args) == 2


def test_an_inner_context_borrows_the_parser_of_an_outer_roundtrip_instrument():
    from pypto.ir.instruments import make_roundtrip_instrument
    with passes.PassContext([make_roundtrip_instrument()]):
        with passes.PassContext([], verification_level=passes.VerificationLevel.ROUNDTRIP):
            assert passes.PassContext.current().parser() is pl.parse
            passes.convert_to_ssa()(UnrollMe)   # the implied roundtrip check finds a parser


def test_unroll_before_ssa_keeps_reassigned_outer_vars():
    after = passes.convert_to_ssa()(passes.unroll_loops()(UnrollMe))
    body = ir.flatten_to_stmts(after.get_function("k").body)
    adds = [s for s in body if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call)
            and s.value.op.name == "tile.adds"]
    assert len(adds) == 3 and adds[2].value.args[0] is adds[1].var and adds[1].value.args[0] is adds[0].var


def test_operand_less_tile_ops_have_unqualified_spellings():
    from pypto.language.ops import build_call
    assert build_call("get_block_idx", []).op.name == "tile.get_block_idx"
    assert build_call("tpop_from_aic", [], {"split": 0}).op.name == "tile.tpop_from_aic"
