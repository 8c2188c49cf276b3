"""OptimizeOrchTensors: iter-arg buffer reuse (pattern 1) and the assemble-loop rewrite (pattern 3)."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.passes.optimize_orch_tensors import optimize_orch_tensors
from pypto.runtime import run


@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, acc: pl.Tensor[[64], pl.FP32], x: pl.Tensor[[64], pl.FP32],
          ret0_out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        acc_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(acc, [0], [64])
        x_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0], [64])
        y: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc_tile, x_tile)
        ret0_store: pl.Tensor[[64], pl.FP32] = pl.store(y, [0], ret0_out)
        return ret0_store

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, acc0: pl.InOut[pl.Tensor[[64], pl.FP32]], x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        for i, (acc,) in pl.range(10, init_values=(acc0,)):
            ret0_out: pl.Tensor[[64], pl.FP32] = pl.tensor.create([64], dtype=pl.FP32)
            result: pl.Tensor[[64], pl.FP32] = self.k(acc, x, ret0_out)
            new_acc = pl.yield_(result)
        return new_acc


def test_loop_carried_output_folds_into_the_inout_param():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, acc: pl.InOut[pl.Tensor[[64], pl.FP32]], x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            acc_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(acc, [0], [64])
            x_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0], [64])
            y: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc_tile, x_tile)
            ret0_store: pl.Tensor[[64], pl.FP32] = pl.store(y, [0], acc)
            return ret0_store

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, acc0: pl.InOut[pl.Tensor[[64], pl.FP32]],
                 x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            for i, (acc,) in pl.range(10, init_values=(acc0,)):
                result: pl.Tensor[[64], pl.FP32] = self.k(acc, x)
                new_acc = pl.yield_(result)
            return new_acc

    ir.assert_structural_equal(optimize_orch_tensors()(Accumulate), Expected)


def test_folded_accumulation_runs_in_place():
    acc0, x = np.arange(64, dtype=np.float32), np.full(64, 0.5, np.float32)
    compiled = run(Accumulate)
    assert compiled.lowered["k"].param_directions[0] is pl.ParamDirection.InOut
    np.testing.assert_allclose(compiled(acc0.copy(), x), acc0 + 10 * x)


def test_a_loop_starting_from_a_caller_input_is_not_folded():
    text = Accumulate.as_python().replace("acc0: pl.InOut[pl.Tensor[[64], pl.FP32]]", "acc0: pl.Tensor[[64], pl.FP32]")
    read_only = pl.parse(text)
    ir.assert_structural_equal(optimize_orch_tensors()(read_only), read_only)


def test_kernel_that_reads_the_carry_after_writing_is_not_folded():
    @pl.program
    class Late:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, acc: pl.Tensor[[64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            a: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(acc, [0], [64])
            s: pl.Tensor[[64], pl.FP32] = pl.store(a, [0], ret0_out)
            b: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.load(acc, [0], [64])
            s2: pl.Tensor[[64], pl.FP32] = pl.store(b, [0], s)
            return s2

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, acc0: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            a0: pl.Tensor[[64], pl.FP32] = pl.tensor.create([64], dtype=pl.FP32)
            for i, (acc,) in pl.range(2, init_values=(a0,)):
                o: pl.Tensor[[64], pl.FP32] = pl.tensor.create([64], dtype=pl.FP32)
                r: pl.Tensor[[64], pl.FP32] = self.k(acc, o)
                acc_rv = pl.yield_(r)
            return acc_rv

    ir.assert_structural_equal(optimize_orch_tensors()(Late), Late)


def test_assemble_loop_into_an_out_param_becomes_a_store_loop():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, 32], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            buf: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([1, 64], dtype=pl.FP32)
            for i, (acc,) in pl.range(2, init_values=(buf,)):
                off: pl.Scalar[pl.INDEX] = i * 32
                chunk: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [1, 32])
                nxt: pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(acc, chunk, [0, off])
                result = pl.yield_(nxt)
            ret0_store: pl.Tensor[[1, 64], pl.FP32] = pl.store(result, [0, 0], ret0_out)
            return ret0_store

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, 32], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            for i, (acc,) in pl.range(2, init_values=(ret0_out,)):
                off: pl.Scalar[pl.INDEX] = i * 32
                chunk: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [1, 32])
                nxt: pl.Tensor[[1, 64], pl.FP32] = pl.store(chunk, [0, off], acc)
                result = pl.yield_(nxt)
            return result

    ir.assert_structural_equal(optimize_orch_tensors()(Before), Expected)
