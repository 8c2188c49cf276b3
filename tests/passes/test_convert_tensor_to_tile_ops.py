"""ConvertTensorToTileOps: seed 003's Before/After example and each phase, as DSL programs.

Tile annotations carry their memory space (pl.Mem.Vec): in this project type deduction sets it
(docs/internals.md §1), where the seed's text leaves it implicit.
"""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import InternalError
from pypto.pypto_core import passes


def test_seed_003_example():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[64], pl.FP32] = self.main_incore_0(x)
            return y

    @pl.program
    class After:
        @pl.function(type=pl.FunctionType.InCore)
        def main_incore_0(self, x: pl.Tensor[[64], pl.FP32],
                          ret0_out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            x_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(x, (0,), (64,))
            y_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.add(x_tile, x_tile)
            ret0_store: pl.Tensor[[64], pl.FP32] = pl.store(y_tile, (0,), ret0_out)
            return ret0_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            ret0_out: pl.Tensor[[64], pl.FP32] = pl.tensor.create((64,), dtype=pl.FP32)
            y: pl.Tensor[[64], pl.FP32] = self.main_incore_0(x, ret0_out)
            return y

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Before), After)


def test_self_loading_ops_get_no_entry_load_and_assemble_becomes_store():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            a: pl.Tensor[[32, 64], pl.FP32] = pl.slice(x, [32, 64], [32, 0])
            b: pl.Tensor[[32, 64], pl.FP32] = pl.exp(a)
            out2: pl.Tensor[[64, 64], pl.FP32] = pl.assemble(out, b, [0, 0])
            return out2

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
            a: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [32, 0], [32, 64], [32, 64],
                                                                      target_memory=pl.Mem.Vec)
            b: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(a)
            out2: pl.Tensor[[64, 64], pl.FP32] = pl.tile.store(b, [0, 0], out)
            return out2

    after = passes.convert_tensor_to_tile_ops()(Before)
    ir.assert_structural_equal(after, Expected)
    assert after["k"].param_directions == Before["k"].param_directions  # no ret<i>_out: the store already returns


def test_types_propagate_through_iter_args_and_call_in_loop_gets_create():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            acc: pl.Tensor[[16], pl.FP32] = pl.add(x, x)
            for i, (a,) in pl.range(3, init_values=(acc,)):
                a2: pl.Tensor[[16], pl.FP32] = pl.add(a, x)
                a_rv = pl.yield_(a2)
            return a_rv

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            for j, (y,) in pl.range(2, init_values=(x,)):
                y2: pl.Tensor[[16], pl.FP32] = self.k(y)
                y_rv = pl.yield_(y2)
            return y_rv

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            x_tile: pl.Tile[[16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0], [16])
            acc: pl.Tile[[16], pl.FP32, pl.Mem.Vec] = pl.tile.add(x_tile, x_tile)
            for i, (a,) in pl.range(3, init_values=(acc,)):
                a2: pl.Tile[[16], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, x_tile)
                a_rv = pl.yield_(a2)
            ret0_store: pl.Tensor[[16], pl.FP32] = pl.store(a_rv, [0], ret0_out)
            return ret0_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            for j, (y,) in pl.range(2, init_values=(x,)):
                ret0_out: pl.Tensor[[16], pl.FP32] = pl.tensor.create([16], dtype=pl.FP32)
                y2: pl.Tensor[[16], pl.FP32] = self.k(y, ret0_out)
                y_rv = pl.yield_(y2)
            return y_rv

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Before), Expected)


def test_spmd_wrapper_forwards_new_out_param():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y: pl.Tensor[[16], pl.FP32] = pl.add(x, x)
            return y

        @pl.function(type=pl.FunctionType.Spmd)
        def wrap(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y: pl.Tensor[[16], pl.FP32] = self.k(x)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y: pl.Tensor[[16], pl.FP32] = self.wrap(x)
            return y

    after = passes.convert_tensor_to_tile_ops()(Before)
    wrap, main = after["wrap"], after["main"]
    assert [p.name_hint for p in wrap.params] == ["x", "ret0_out"]
    assert wrap.param_directions[-1] is pl.ParamDirection.Out
    inner = wrap.body.stmts[0].value
    assert inner.args[1] is wrap.params[1]
    creates = [s for s in main.body.stmts if isinstance(s, ir.AssignStmt) and not s.value.is_function_call()]
    assert [s.value.op.name for s in creates] == ["tensor.create"]
    assert main.body.stmts[1].value.args[1] is creates[0].var


def test_missing_converter_names_op_and_line():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y: pl.Tensor[[16], pl.FP32] = pl.exp(x)
            return y

    from pypto.passes.convert_tensor_to_tile_ops import registry
    saved = registry.CONVERTERS.pop("tensor.exp")
    try:
        with pytest.raises(InternalError, match=r"test_convert_tensor_to_tile_ops.py:\d+:\d+: .*'tensor.exp' has no "
                                                r"registered tile conversion"):
            passes.convert_tensor_to_tile_ops()(P)
    finally:
        registry.CONVERTERS["tensor.exp"] = saved


def test_incore_tile_ops_verifier_flags_leftover_tensor_ops():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y: pl.Tensor[[16], pl.FP32] = pl.add(x, x)
            return y

    diags = ir.verifier.verify_property("IncoreTileOps", P)
    assert len(diags) == 1 and "tensor.add" in diags[0].message
    assert not ir.verifier.verify_property("IncoreTileOps", passes.convert_tensor_to_tile_ops()(P))


def test_matmul_reads_mat_tiles_and_lands_in_acc():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 32], pl.FP32]:
            c: pl.Tensor[[32, 32], pl.FP32] = pl.matmul(a, b, b_trans=True)
            return c

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            a_mat = pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Mat, attrs={"__compiler_tensor_to_tile_mat_bridge": True})
            b_mat = pl.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat, attrs={"__compiler_tensor_to_tile_mat_bridge": True})
            b_t = pl.tile.transpose_view(b_mat)
            c = pl.tile.matmul(a_mat, b_t)        # Mat → Left / Right: InferTileMemorySpace's moves
            ret0_store = pl.store(c, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Before), Expected)


def test_written_in_params_are_upgraded():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16], pl.FP32], o: pl.Tensor[[16], pl.FP32],
              io: pl.Tensor[[16], pl.FP32]) -> tuple[pl.Tensor[[16], pl.FP32], pl.Tensor[[16], pl.FP32]]:
            y: pl.Tensor[[16], pl.FP32] = pl.add(x, io)
            o2: pl.Tensor[[16], pl.FP32] = pl.assemble(o, y, [0])
            io2: pl.Tensor[[16], pl.FP32] = pl.assemble(io, y, [0])
            return o2, io2

    after = passes.convert_tensor_to_tile_ops()(Before)
    PD = pl.ParamDirection
    assert after["k"].param_directions == (PD.In, PD.Out, PD.InOut)


def test_a_tensor_op_without_a_conversion_is_an_internal_error():
    """The test-only op test.tensor_op_no_conv is a tensor op no converter handles (and no catalog lists)."""
    from pypto.ir import AssignStmt, Function, FunctionType, Program, ReturnStmt, SeqStmts, TensorType, Var
    from pypto.ir.dtypes import FP32
    from pypto.ir.ops.registry import all_ops
    assert "test.tensor_op_no_conv" not in all_ops()
    x, y = Var("x", TensorType([8], FP32)), Var("y", TensorType([8], FP32))
    body = SeqStmts([AssignStmt(y, ir.create_op_call("test.tensor_op_no_conv", [x], {})), ReturnStmt([y])])
    prog = Program([Function("k", [x], [y.type], body, FunctionType.InCore)], "P")
    with pytest.raises(InternalError, match="'test.tensor_op_no_conv' has no registered tile conversion"):
        passes.convert_tensor_to_tile_ops()(prog)
