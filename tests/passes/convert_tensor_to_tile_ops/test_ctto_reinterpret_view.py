"""reinterpret_view across element widths and byte-equivalent shapes: the tensor form converts 1:1 to
the tile form (seed 003's 1:1 table), a DN source is refused in a kernel, and the bytes come out as
numpy's `.view` says on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ValueCheckError
from pypto.ir.op import tensor_ops
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run


@pl.program
class Widen:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[8, 32], pl.INT16]:
        y: pl.Tensor[[8, 32], pl.INT16] = pl.reinterpret_view(x, pl.INT16)
        return y


def test_a_width_change_rescales_the_last_dim_and_lowers_one_to_one():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 16], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[8, 32], pl.INT16]]) -> pl.Tensor[[8, 32], pl.INT16]:
            x_tile: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [8, 16], [8, 16],
                                                                         target_memory=pl.Mem.Vec)
            y: pl.Tile[[8, 32], pl.INT16, pl.Mem.Vec] = pl.tile.reinterpret_view(x_tile, dtype=pl.INT16)
            ret0_store: pl.Tensor[[8, 32], pl.INT16] = pl.tile.store(y, [0, 0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Widen), Expected)


def test_a_dn_source_is_refused_in_a_kernel():
    ib = ir.IRBuilder()
    with ib.function("k", type=ir.FunctionType.InCore) as f:
        x = f.param("x", ir.TensorType([8, 16], ir.DataType.FP32, None, ir.TensorView([], ir.TensorLayout.DN)))
        v = ib.let("v", tensor_ops.reinterpret_view(x, ir.DataType.INT16))
        f.return_type(v.type)
        ib.return_stmt(v)
    program = ir.Program([f.get_result()], "Dn", ir.Span.unknown())
    with pytest.raises(ValueCheckError, match="lowers only packed ND tensors"):
        passes.convert_tensor_to_tile_ops()(program)


@pl.program
class Regroup:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], wide: pl.Out[pl.Tensor[[16, 64], pl.INT16]],
             regrouped: pl.Out[pl.Tensor[[32, 16], pl.INT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            wide = pl.assemble(wide, pl.reinterpret_view(x, pl.INT16), [0, 0])
            regrouped = pl.assemble(regrouped, pl.reinterpret_view(x, pl.INT32, shape=[32, 16]), [0, 0])


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_reinterpreted_bytes_match_numpy(platform):
    x = np.random.default_rng(2).uniform(-4, 4, (16, 32)).astype(np.float32)
    wide = np.zeros((16, 64), np.int16)
    regrouped = np.zeros((32, 16), np.int32)
    run(Regroup, config=RunConfig(platform=platform))(x, wide, regrouped)
    np.testing.assert_array_equal(wide, x.view(np.int16))
    np.testing.assert_array_equal(regrouped, x.view(np.int32).reshape(32, 16))
