"""A loop writing one constant over a contiguous run of a GM tensor (a whole number of 32-byte blocks)
becomes tensor.full + reshape + assemble before conversion, i.e. tile.full + tile.reshape + tile.store:
one MTE3 store instead of scalar stores, so a kernel that also stores the tensor by DMA on another
branch has one store path. Short runs, strided runs and loops whose writes could reorder stay scalar.
The SSA check lets a branch rebind a parameter Var once (how `dst[...] = x` in a branch parses)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ValueCheckError
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls, op_names


@pl.program
class FillOrCopy:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, col: pl.Tensor[[8, 1], pl.FP32], row: pl.Tensor[[2, 32], pl.FP16],
          flag: pl.Scalar[pl.INT32]) -> pl.Tensor[[8, 1], pl.FP32]:
        if flag > 0:
            ones = pl.full([8, 1], dtype=pl.FP32, value=1.0)
            col[0:8, 0:1] = ones
        else:
            for i in pl.range(8):
                pl.tensor.write(col, [i, 0], pl.const(3.0, pl.FP32))
            for j in pl.range(16):
                pl.tensor.write(row, [1, j + 16], pl.const(7.0, pl.FP16))
        return col


def test_a_constant_contiguous_fill_loop_becomes_one_bulk_store():
    after = convert_tensor_to_tile_ops()(FillOrCopy)
    ops = op_names(after["k"])
    assert "tensor.write" not in ops
    assert ops.count("tile.full") == 3 and ops.count("tile.reshape") == 2 and ops.count("tile.store") == 3
    stores = op_calls(after["k"], "tile.store")
    offsets = [[d.value for d in s.args[1].elements] for s in stores]
    assert [1, 16] in offsets                     # the row run starts where the loop's index starts


def _fill_or_zero(n: int, step: int):
    @pl.program
    class FillOrZero:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, t: pl.Tensor[[32, 1], pl.FP32], flag: pl.Scalar[pl.INT32]) -> pl.Tensor[[32, 1], pl.FP32]:
            if flag > 0:
                z = pl.full([32, 1], dtype=pl.FP32, value=0.0)
                t[0:32, 0:1] = z
            else:
                for i in pl.range(0, n * step, step):
                    pl.tensor.write(t, [i, 0], pl.const(1.0, pl.FP32))
            return t
    return FillOrZero


@pytest.mark.parametrize("n, step", [(4, 1), (8, 2)], ids=["short", "strided"])
def test_fill_loops_that_are_not_whole_contiguous_blocks_stay_scalar(n, step):
    """4 FP32 elements are 16 bytes, less than one MTE3 block; a step of 2 leaves gaps."""
    with pytest.raises(ValueCheckError, match="GM tensor 't' mixes MTE3 and scalar stores"):
        convert_tensor_to_tile_ops()(_fill_or_zero(n, step))


def test_a_whole_contiguous_run_of_the_same_loop_is_bulk_stored():
    assert "tensor.write" not in op_names(convert_tensor_to_tile_ops()(_fill_or_zero(8, 1))["k"])


@pl.program
class Overlapping:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, t: pl.Tensor[[17, 1], pl.FP32], flag: pl.Scalar[pl.INT32]) -> pl.Tensor[[17, 1], pl.FP32]:
        if flag > 0:
            z = pl.full([16, 1], dtype=pl.FP32, value=0.0)
            t[0:16, 0:1] = z
        else:
            for i in pl.range(16):
                pl.tensor.write(t, [i, 0], pl.const(1.0, pl.FP32))
                pl.tensor.write(t, [i + 1, 0], pl.const(2.0, pl.FP32))     # hoisting would reorder the writes
        return t


def test_writes_at_different_indices_in_one_loop_are_not_hoisted():
    with pytest.raises(ValueCheckError, match="mixes MTE3 and scalar stores"):
        convert_tensor_to_tile_ops()(Overlapping)


def test_a_branch_may_rebind_a_parameter_once_in_ssa_form():
    assert ir.verifier.verify_property("SSAForm", FillOrCopy) == []
    from pypto.ir import AssignStmt, ConstInt, Function, FunctionType, Program, ReturnStmt, ScalarType, SeqStmts
    from pypto.ir import Var
    from pypto.ir.dtypes import INDEX
    x = Var("x", ScalarType(INDEX))
    twice = SeqStmts([AssignStmt(x, ConstInt(1)), AssignStmt(x, ConstInt(2)), ReturnStmt([x])])
    f = Function("f", [x], [ScalarType(INDEX)], twice, FunctionType.InCore)
    assert ir.verifier.verify_property("SSAForm", Program([f], "P"))


@pl.program
class Fill:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, flag: pl.Scalar[pl.INT32], dst: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            if flag > 0:
                ones = pl.full([16, 1], dtype=pl.FP32, value=1.0)
                dst[0:16, 0:1] = ones
            else:
                for i in pl.range(16):
                    pl.tensor.write(dst, [i, 0], pl.const(-2.5, pl.FP32))
        return dst


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_either_branch_fills_the_tensor(platform):
    for flag, want in ((1, 1.0), (0, -2.5)):
        got = np.zeros((16, 1), np.float32)
        run(Fill, config=RunConfig(platform=platform))(flag, got)
        np.testing.assert_array_equal(got, np.full((16, 1), want, np.float32))
