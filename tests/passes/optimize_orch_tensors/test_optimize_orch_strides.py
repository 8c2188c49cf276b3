"""OptimizeOrchTensors patterns 2 (assemble parent strides) and 4 (slice input strides): kernel
parameters that are windows of a larger tensor carry the parent's strides; results stay numpy-equal."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.passes.optimize_orch_tensors import optimize_orch_tensors
from pypto.runtime import RunConfig, run

TV = pl.TensorView


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 128], pl.FP32], mb: pl.Scalar[pl.INDEX], nb: pl.Scalar[pl.INDEX],
          ret0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.load(a, [mb, nb], [32, 32])
        e: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        r: pl.Tensor[[32, 32], pl.FP32] = pl.store(e, [0, 0], ret0_out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        for mb, (c1,) in pl.range(0, 128, 32, init_values=(c,)):
            for nb, (c2,) in pl.range(0, 128, 32, init_values=(c1,)):
                ret0_out: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.create([32, 32], dtype=pl.FP32)
                res: pl.Tensor[[32, 32], pl.FP32] = self.k(a, mb, nb, ret0_out)
                c3: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(c2, res, [mb, nb])
                c2_rv = pl.yield_(c3)
            c1_rv = pl.yield_(c2_rv)
        return c1_rv


def test_an_out_param_assembled_into_a_parent_gets_its_strides_and_is_written_in_place():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[128, 128], pl.FP32], mb: pl.Scalar[pl.INDEX], nb: pl.Scalar[pl.INDEX],
              ret0_out: pl.Out[pl.Tensor[[32, 32], pl.FP32, TV(stride=[128, 1])]]
              ) -> pl.Tensor[[32, 32], pl.FP32]:
            t: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.load(a, [mb, nb], [32, 32])
            e: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            r: pl.Tensor[[32, 32], pl.FP32, TV(stride=[128, 1])] = pl.store(e, [0, 0], ret0_out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[128, 128], pl.FP32],
                 c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
            for mb, (c1,) in pl.range(0, 128, 32, init_values=(c,)):
                for nb, (c2,) in pl.range(0, 128, 32, init_values=(c1,)):
                    ret0_out: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.slice(c2, [32, 32], [mb, nb])
                    res: pl.Tensor[[32, 32], pl.FP32] = self.k(a, mb, nb, ret0_out)
                    c3: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(c2, res, [mb, nb])
                    c2_rv = pl.yield_(c3)
                c1_rv = pl.yield_(c2_rv)
            return c1_rv

    ir.assert_structural_equal(optimize_orch_tensors()(Blocks), Expected)


def test_a_staging_buffer_read_again_keeps_contiguous_strides():
    text = Blocks.as_python().replace("self.k(a, mb, nb, ret0_out)\n", "self.k(a, mb, nb, ret0_out)\n"
                                      "                dbg: pl.Tensor[[32, 32], pl.FP32] = pl.tensor.assemble(ret0_out, res, [0, 0])\n")
    prog = pl.parse(text)
    after = optimize_orch_tensors()(prog)
    assert after["k"].params[3].type.tensor_view is None


def test_blocks_written_in_place_match_numpy():
    a = np.random.default_rng(5).uniform(-1, 1, (128, 128)).astype(np.float32)
    c = np.full((128, 128), np.nan, np.float32)
    compiled = run(Blocks, a, c, config=RunConfig(platform="a2a3sim"))
    assert compiled.lowered["k"].params[3].type.tensor_view.stride[0].value == 128
    np.testing.assert_allclose(c, np.exp(a), rtol=1e-6)


@pl.program
class RowWindows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [32, 64])
        d: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)
        r: pl.Tensor[[32, 64], pl.FP32] = pl.store(d, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        xs: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.slice(x, [32, 64], [0, 128])
        y: pl.Tensor[[32, 64], pl.FP32] = self.k(xs, out)
        return y


def test_an_in_param_fed_by_a_slice_gets_the_parents_strides():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 64], pl.FP32, TV(stride=[256, 1])],
              out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
            t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [32, 64])
            d: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(t, t)
            r: pl.Tensor[[32, 64], pl.FP32] = pl.store(d, [0, 0], out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[32, 256], pl.FP32],
                 out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
            xs: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.slice(x, [32, 64], [0, 128])
            y: pl.Tensor[[32, 64], pl.FP32] = self.k(xs, out)
            return y

    ir.assert_structural_equal(optimize_orch_tensors()(RowWindows), Expected)


def test_a_param_also_fed_a_whole_tensor_keeps_contiguous_strides():
    text = RowWindows.as_python().replace("        return y\n",
                                          "        y2: pl.Tensor[[32, 64], pl.FP32] = self.k(y, out)\n        return y2\n")
    after = optimize_orch_tensors()(pl.parse(text))
    assert after["k"].params[0].type.tensor_view is None


def test_a_sliced_input_reads_the_right_columns_on_the_simulator():
    x = np.random.default_rng(6).uniform(-1, 1, (32, 256)).astype(np.float32)
    out = np.full((32, 64), np.nan, np.float32)
    run(RowWindows, x, out, config=RunConfig(platform="a5sim"))
    np.testing.assert_allclose(out, 2 * x[:, 128:192], rtol=1e-6)


def test_a_parent_read_between_the_call_and_its_assemble_keeps_the_staging_buffer():
    text = Blocks.as_python().replace(
        "                c3: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(c2, res, [mb, nb])\n",
        "                peek: pl.Scalar[pl.FP32] = pl.tensor.read(c2, [mb, nb])\n"
        "                c3: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(c2, res, [mb, nb])\n")
    prog = pl.parse(text)
    assert "peek" in prog.as_python()
    after = optimize_orch_tensors()(prog)
    assert after["k"].params[3].type.tensor_view is None
