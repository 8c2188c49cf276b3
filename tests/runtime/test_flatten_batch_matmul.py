"""FlattenTileNdTo2D: a rank-3 tile.batch_matmul is not split into per-batch 2-D matmuls yet; the
pipeline says so by name (UnsupportedError with a hint) instead of a confusing re-deduction error."""

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.runtime import run


@pl.program
class BatchMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[3, 16, 32], pl.FP32], b: pl.Tensor[[3, 32, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[3, 16, 16], pl.FP32]]) -> pl.Tensor[[3, 16, 16], pl.FP32]:
        ta: pl.Tile[[3, 16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0, 0], [3, 16, 32], [3, 16, 32],
                                                                    target_memory=pl.Mem.Mat)
        tb: pl.Tile[[3, 32, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0, 0], [3, 32, 16], [3, 32, 16],
                                                                    target_memory=pl.Mem.Mat)
        tl: pl.Tile[[3, 16, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(ta, target_memory=pl.Mem.Left)
        tr: pl.Tile[[3, 32, 16], pl.FP32, pl.Mem.Right] = pl.tile.move(tb, target_memory=pl.Mem.Right)
        c: pl.Tile[[3, 16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.batch_matmul(tl, tr)
        r: pl.Tensor[[3, 16, 16], pl.FP32] = pl.tile.store(c, [0, 0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[3, 16, 32], pl.FP32], b: pl.Tensor[[3, 32, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 16, 16], pl.FP32]]) -> pl.Tensor[[3, 16, 16], pl.FP32]:
        out = self.k(a, b, out)
        return out


def test_rank3_batch_matmul_is_reported_as_unsupported_by_name():
    with pytest.raises(UnsupportedError, match="FlattenTileNdTo2D: tile.batch_matmul of rank 3 tiles"):
        run(BatchMatmul)
