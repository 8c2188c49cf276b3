"""Cube operands (seed 003, MatmulSlice) that reach a matmul through aliases or a reshape still load
straight into Mat, those loads carry the compiler's bridge mark, and an FP16 / BF16 matmul keeps its FP32
Acc tile (the FIXPIPE rounds it on the store). Checked structurally and numpy-equal on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run

BRIDGE = {"__compiler_tensor_to_tile_mat_bridge": True}
RNG = np.random.default_rng(5)


@pl.program
class AliasedSlice:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        a_s: pl.Tensor[[16, 64], pl.FP32] = pl.slice(a, [16, 64], [16, 0])
        a_again: pl.Tensor[[16, 64], pl.FP32] = a_s
        c: pl.Tensor[[16, 16], pl.FP32] = pl.matmul(a_again, b)
        return c


def test_a_slice_behind_an_alias_loads_into_mat_with_the_bridge_mark():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 16], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            a_s: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [16, 0], [16, 64], [16, 64],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            a_again: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = a_s
            b_m: pl.Tile[[64, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 16], [64, 16],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_again, b_m)
            ret0_store: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(c, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(AliasedSlice), Expected)


@pl.program
class Fp16Matmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16]) -> pl.Tensor[[16, 16], pl.FP16]:
        c: pl.Tensor[[16, 16], pl.FP16] = pl.matmul(a, b)
        return c


def test_an_fp16_matmul_stores_its_fp32_acc_tile_through_the_fixpipe():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
              ret0_out: pl.Out[pl.Tensor[[16, 16], pl.FP16]]) -> pl.Tensor[[16, 16], pl.FP16]:
            a_m: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], [16, 32],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            b_m: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 16], [32, 16],
                                                                       target_memory=pl.Mem.Mat, attrs=BRIDGE)
            c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_m, b_m)
            ret0_store: pl.Tensor[[16, 16], pl.FP16] = pl.tile.store(c, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Fp16Matmul), Expected)


@pl.program
class Fp16MatmulRun:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP16]]) -> pl.Tensor[[16, 16], pl.FP16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a_s: pl.Tensor[[16, 32], pl.FP16] = pl.slice(a, [16, 32], [16, 0])
            a_alias: pl.Tensor[[16, 32], pl.FP16] = a_s
            out = pl.assemble(out, pl.matmul(a_alias, b), [0, 0])
        return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_an_fp16_matmul_of_an_aliased_slice_matches_numpy(platform):
    a = RNG.standard_normal((64, 32)).astype(np.float16)
    b = RNG.standard_normal((32, 16)).astype(np.float16)
    got = np.zeros((16, 16), np.float16)
    run(Fp16MatmulRun, config=RunConfig(platform=platform))(a, b, got)
    want = (a[16:32].astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
