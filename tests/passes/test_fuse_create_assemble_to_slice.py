"""FuseCreateAssembleToSlice: a kernel output staged only to be assembled into a larger tensor is
written in place into that tensor's window; the assemble goes. Before / Expected programs, the
cases it must leave alone, and a numpy-equal run through the Default pipeline."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run

from tests.passes.optimize_orch_tensors.test_optimize_orch_strides import Blocks
from tests.helpers import op_names

TV = pl.TensorView


def _fuse(program):
    return passes.fuse_create_assemble_to_slice()(program)


@pl.program
class Rows:
    """Each iteration's kernel output is a [4, 128] band of c: contiguous in c, so the kernel's plain
    Out parameter already describes the window."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 128], pl.FP32], i: pl.Scalar[pl.INDEX],
          ret0_out: pl.Out[pl.Tensor[[4, 128], pl.FP32]]) -> pl.Tensor[[4, 128], pl.FP32]:
        t: pl.Tile[[4, 128], pl.FP32, pl.Mem.Vec] = pl.load(a, [i, 0], [4, 128])
        e: pl.Tile[[4, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        r: pl.Tensor[[4, 128], pl.FP32] = pl.store(e, [0, 0], ret0_out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        for i, (c1,) in pl.range(0, 16, 4, init_values=(c,)):
            ret0_out: pl.Tensor[[4, 128], pl.FP32] = pl.tensor.create([4, 128], dtype=pl.FP32)
            res: pl.Tensor[[4, 128], pl.FP32] = self.k(a, i, ret0_out)
            c2: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.assemble(c1, res, [i, 0])
            c1_rv = pl.yield_(c2)
        return c1_rv


def test_a_create_assembled_once_becomes_a_slice_of_the_target_and_the_assemble_goes():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 128], pl.FP32], i: pl.Scalar[pl.INDEX],
              ret0_out: pl.Out[pl.Tensor[[4, 128], pl.FP32]]) -> pl.Tensor[[4, 128], pl.FP32]:
            t: pl.Tile[[4, 128], pl.FP32, pl.Mem.Vec] = pl.load(a, [i, 0], [4, 128])
            e: pl.Tile[[4, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            r: pl.Tensor[[4, 128], pl.FP32] = pl.store(e, [0, 0], ret0_out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 128], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
            for i, (c1,) in pl.range(0, 16, 4, init_values=(c,)):
                ret0_out: pl.Tensor[[4, 128], pl.FP32] = pl.tensor.slice(c1, [4, 128], [i, 0])
                res: pl.Tensor[[4, 128], pl.FP32] = self.k(a, i, ret0_out)
                c1_rv = pl.yield_(c1)
            return c1_rv

    ir.assert_structural_equal(_fuse(Rows), Expected)


def test_the_self_assemble_pattern_2_leaves_is_dropped():
    from pypto.passes.optimize_orch_tensors import optimize_orch_tensors
    staged = optimize_orch_tensors()(Blocks)
    assert "tensor.assemble" in op_names(staged["main"])          # pattern 2: slice + a copy onto itself

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
                    c2_rv = pl.yield_(c2)
                c1_rv = pl.yield_(c2_rv)
            return c1_rv

    ir.assert_structural_equal(_fuse(staged), Expected)


def test_a_parent_read_between_the_call_and_the_assemble_keeps_the_staging_buffer():
    text = Rows.as_python().replace(
        "            c2: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.assemble(c1, res, [i, 0])\n",
        "            peek: pl.Scalar[pl.FP32] = pl.tensor.read(c1, [i, 0])\n"
        "            c2: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.assemble(c1, res, [i, 0])\n")
    prog = pl.parse(text)
    assert "peek" in prog.as_python()
    assert _fuse(prog) is prog


def test_a_window_the_kernel_would_address_contiguously_is_not_fused():
    """A [32, 32] block of a [128, 128] target is strided; the kernel's plain Out param is not."""
    after = _fuse(Blocks)
    assert after is Blocks
    assert "tensor.create" in op_names(after["main"]) and "tensor.assemble" in op_names(after["main"])


def test_a_staged_slice_at_other_offsets_than_the_assemble_is_a_real_copy_and_is_kept():
    text = Rows.as_python().replace("pl.tensor.create([4, 128], dtype=pl.FP32, layout=pl.TensorLayout.ND)", "pl.tensor.slice(c1, [4, 128], [0, 0])")
    prog = pl.parse(text)
    assert "pl.tensor.slice(c1, [4, 128], [0, 0])" in prog.as_python()
    assert _fuse(prog) is prog


def test_the_default_pipeline_writes_the_bands_in_place_and_matches_numpy():
    a = np.random.default_rng(21).uniform(-1, 1, (16, 128)).astype(np.float32)
    c = np.full((16, 128), np.nan, np.float32)
    compiled = run(Rows, a, c, config=RunConfig(platform="a2a3sim"))
    assert "tensor.assemble" not in op_names(compiled.lowered["main"])
    assert "tensor.create" not in op_names(compiled.lowered["main"])
    np.testing.assert_allclose(c, np.exp(a), rtol=1e-6)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_blocks_through_pattern_2_and_the_fusion_match_numpy(platform):
    a = np.random.default_rng(22).uniform(-1, 1, (128, 128)).astype(np.float32)
    c = np.full((128, 128), np.nan, np.float32)
    compiled = run(Blocks, a, c, config=RunConfig(platform=platform))
    assert "tensor.assemble" not in op_names(compiled.lowered["main"])
    np.testing.assert_allclose(c, np.exp(a), rtol=1e-6)
