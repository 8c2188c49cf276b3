"""OptimizeOrchTensors pattern 5, loop-aggregate output windows: a windowize kernel storing one
tile per loop iteration into its Out tensor gets the union of those tiles sliced at its call site,
the stores rebased to the window's origin; the cases it leaves full-tensor; numpy-equal runs."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.passes.optimize_orch_tensors import optimize_orch_tensors
from pypto.runtime import RunConfig, run

TV = pl.TensorView


@pl.program
class Bands:
    @pl.function(type=pl.FunctionType.InCore, attrs={"windowize": True})
    def k(self, x: pl.Tensor[[64, 256], pl.FP32], r: pl.Scalar[pl.INDEX],
          out: pl.Out[pl.Tensor[[64, 256], pl.FP32]]) -> pl.Tensor[[64, 256], pl.FP32]:
        for j, (acc,) in pl.range(0, 4, 1, init_values=(out,)):
            t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.load(x, [r * 16, j * 32], [16, 32])
            e: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            acc2: pl.Tensor[[64, 256], pl.FP32] = pl.store(e, [r * 16, j * 32], acc)
            acc_rv = pl.yield_(acc2)
        return acc_rv

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 256], pl.FP32]]) -> pl.Tensor[[64, 256], pl.FP32]:
        for r, (o,) in pl.range(0, 4, 1, init_values=(out,)):
            y: pl.Tensor[[64, 256], pl.FP32] = self.k(x, r, o)
            o_rv = pl.yield_(y)
        return o_rv


def test_the_pieces_of_a_store_loop_form_one_window_sliced_at_the_call_site():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k__windowed(self, x: pl.Tensor[[64, 256], pl.FP32], r: pl.Scalar[pl.INDEX],
                        out: pl.Out[pl.Tensor[[16, 128], pl.FP32, TV(stride=[256, 1])]]
                        ) -> pl.Tensor[[16, 128], pl.FP32, TV(stride=[256, 1])]:
            for j, (acc,) in pl.range(0, 4, 1, init_values=(out,)):
                t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.load(x, [r * 16, j * 32], [16, 32])
                e: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
                acc2: pl.Tensor[[16, 128], pl.FP32, TV(stride=[256, 1])] = pl.store(e, [0, j * 32], acc)
                acc_rv = pl.yield_(acc2)
            return acc_rv

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 256], pl.FP32],
                 out: pl.Out[pl.Tensor[[64, 256], pl.FP32]]) -> pl.Tensor[[64, 256], pl.FP32]:
            for r, (o,) in pl.range(0, 4, 1, init_values=(out,)):
                o_window: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.slice(o, [16, 128], [r * 16, 0])
                y_window: pl.Tensor[[16, 128], pl.FP32, TV(stride=[256, 1])] = self.k__windowed(x, r, o_window)
                y: pl.Tensor[[64, 256], pl.FP32] = pl.tensor.assemble(o, y_window, [r * 16, 0])
                o_rv = pl.yield_(y)
            return o_rv

    ir.assert_structural_equal(optimize_orch_tensors()(Bands), Expected)


@pytest.mark.parametrize("change", [
    ("j * 32], acc)", "j * 16], acc)"),                          # pieces overlap
    ("j * 32], acc)", "j * 64], acc)"),                          # pieces leave gaps
    ("pl.range(4, init_values=(out,))", "pl.range(r, init_values=(out,))"),   # a trip count known only at run time
])
def test_pieces_that_do_not_tile_one_narrower_window_stay_full_tensor(change):
    text = Bands.as_python().replace(*change, 1)
    prog = pl.parse(text)
    assert change[1] in prog.as_python()
    after = optimize_orch_tensors()(prog)
    assert "k__windowed" not in after.functions


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_windowed_bands_match_numpy_and_leave_the_rest_untouched(platform):
    x = np.random.default_rng(41).uniform(-1, 1, (64, 256)).astype(np.float32)
    out = np.full((64, 256), np.nan, np.float32)
    compiled = run(Bands, x, out, config=RunConfig(platform=platform))
    assert "k__windowed" in compiled.lowered.functions
    expected = np.full((64, 256), np.nan, np.float32)
    expected[:, :128] = np.exp(x[:, :128])
    np.testing.assert_allclose(out, expected, rtol=1e-6)
