"""OptimizeOrchTensors pattern 5 (static window externalization, opt-in windowize): a kernel
touching one static window gets that window sliced at its call site; results stay numpy-equal."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.passes.optimize_orch_tensors import optimize_orch_tensors
from pypto.runtime import RunConfig, run

TV = pl.TensorView


@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore, attrs={"windowize": True})
    def k(self, x: pl.Tensor[[128, 64], pl.FP32], i: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [i * 32, 0], [32, 64])
        e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        r: pl.Tensor[[128, 64], pl.FP32] = pl.store(e, [i * 32, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i, (acc,) in pl.range(0, 4, 1, init_values=(out,)):
            y: pl.Tensor[[128, 64], pl.FP32] = self.k(x, i, acc)
            acc_rv = pl.yield_(y)
        return acc_rv


def test_a_windowized_kernel_gets_its_windows_sliced_at_the_call_site():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k__windowed(self, x: pl.Tensor[[32, 64], pl.FP32, TV(stride=[64, 1])], i: pl.Scalar[pl.INDEX],
                        out: pl.Out[pl.Tensor[[32, 64], pl.FP32, TV(stride=[64, 1])]]
                        ) -> pl.Tensor[[32, 64], pl.FP32, TV(stride=[64, 1])]:
            t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [32, 64])
            e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            r: pl.Tensor[[32, 64], pl.FP32, TV(stride=[64, 1])] = pl.store(e, [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[128, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            for i, (acc,) in pl.range(0, 4, 1, init_values=(out,)):
                x_window: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.slice(x, [32, 64], [i * 32, 0])
                acc_window: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.slice(acc, [32, 64], [i * 32, 0])
                y_window: pl.Tensor[[32, 64], pl.FP32, TV(stride=[64, 1])] = self.k__windowed(x_window, i, acc_window)
                y: pl.Tensor[[128, 64], pl.FP32] = pl.tensor.assemble(acc, y_window, [i * 32, 0])
                acc_rv = pl.yield_(y)
            return acc_rv

    ir.assert_structural_equal(optimize_orch_tensors()(Rows), Expected)


def test_without_the_opt_in_nothing_is_windowed():
    plain = Rows.with_functions([f.replace(attrs={}) for f in Rows.functions.values()])
    assert "k" in plain.functions and not plain["k"].attrs
    ir.assert_structural_equal(optimize_orch_tensors()(plain), plain)


def test_a_window_offset_from_a_loop_inside_the_kernel_is_not_externalized():
    @pl.program
    class Loop:
        @pl.function(type=pl.FunctionType.InCore, attrs={"windowize": True})
        def k(self, x: pl.Tensor[[128, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            for j, (o,) in pl.range(0, 4, 1, init_values=(out,)):
                t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [j * 32, 0], [32, 64])
                r: pl.Tensor[[128, 64], pl.FP32] = pl.store(t, [j * 32, 0], o)
                o_rv = pl.yield_(r)
            return o_rv

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[128, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
            y: pl.Tensor[[128, 64], pl.FP32] = self.k(x, out)
            return y

    ir.assert_structural_equal(optimize_orch_tensors()(Loop), Loop)


def test_windowed_rows_match_numpy_on_the_simulator():
    x = np.random.default_rng(7).uniform(-1, 1, (128, 64)).astype(np.float32)
    out = np.full((128, 64), np.nan, np.float32)
    compiled = run(Rows, x, out, config=RunConfig(platform="a2a3sim"))
    assert any(n.startswith("k__windowed") for n in compiled.lowered.functions)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
