"""Seed 003's own example, both programs exactly as the seed writes them: the Before program run
through ConvertTensorToTileOps is structurally equal to the After program. The After text leaves
the memory space out of its tile annotations (`pl.Tile[[64], pl.FP32]`); an annotation fills the
fields it omits from the value's deduced type (Vec for a load), so the two agree."""

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.pypto_core import passes


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
    def main_incore_0(
        self, x: pl.Tensor[[64], pl.FP32],
        ret0_out: pl.Out[pl.Tensor[[64], pl.FP32]]
    ) -> pl.Tensor[[64], pl.FP32]:
        x_tile: pl.Tile[[64], pl.FP32] = pl.load(x, (0,), (64,))
        y_tile: pl.Tile[[64], pl.FP32] = pl.tile.add(x_tile, x_tile)
        ret0_store: pl.Tensor[[64], pl.FP32] = pl.store(y_tile, (0,), ret0_out)
        return ret0_store

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        ret0_out: pl.Tensor[[64], pl.FP32] = pl.tensor.create((64,), dtype=pl.FP32)
        y: pl.Tensor[[64], pl.FP32] = self.main_incore_0(x, ret0_out)
        return y


def test_before_through_the_pass_equals_after_as_written():
    ir.assert_structural_equal(passes.convert_tensor_to_tile_ops()(Before), After)


def test_the_written_annotations_kept_the_deduced_memory_space():
    # the equality above is not vacuous: the After program's tiles really are Vec tiles
    tiles = [v.type for v in ir.verifier.defined_vars(After["main_incore_0"].body) if isinstance(v.type, ir.TileType)]
    assert len(tiles) == 2 and all(t.memory_space is MemorySpace.Vec for t in tiles)
