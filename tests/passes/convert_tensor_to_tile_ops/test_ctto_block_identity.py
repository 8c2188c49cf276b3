"""pl.tensor.get_block_idx / get_block_num / get_subblock_idx: the tensor-level spelling of a kernel's
block / lane identity becomes the tile-level op (seed 003: every tensor op has its tile counterpart)."""


import pypto.language as pl
from pypto import ir
from pypto.pypto_core import passes


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        b: pl.Scalar[pl.INDEX] = pl.tensor.get_block_idx()
        n: pl.Scalar[pl.INDEX] = pl.tensor.get_block_num()
        lane: pl.Scalar[pl.INDEX] = pl.tensor.get_subblock_idx()
        y: pl.Tensor[[64], pl.FP32] = pl.adds(x, pl.cast(b + n + lane, pl.FP32))
        return y


def test_block_identity_ops_become_tile_ops():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64], pl.FP32],
              ret0_out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            x_tile: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0], [64], [64], target_memory=pl.Mem.Vec)
            b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
            n: pl.Scalar[pl.INDEX] = pl.tile.get_block_num()
            lane: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
            y: pl.Tile[[64], pl.FP32, pl.Mem.Vec] = pl.tile.adds(x_tile, pl.cast(b + n + lane, pl.FP32))
            ret0_store: pl.Tensor[[64], pl.FP32] = pl.tile.store(y, [0], ret0_out)
            return ret0_store

    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Before), Expected)
