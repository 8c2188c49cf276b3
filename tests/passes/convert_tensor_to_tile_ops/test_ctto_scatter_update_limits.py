"""scatter_update's on-chip lowering refuses what it cannot address: a 4-D paged cache type-checks but is
lowered only after a reshape to [rows, d], and a 2-byte destination of 32768 or more elements would
overflow the i16 flat index."""

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.passes import convert_tensor_to_tile_ops


@pl.program
class FourDimCache:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, index: pl.Tensor[[1, 2], pl.INT32], rows: pl.Tensor[[1, 2, 1, 32], pl.FP32]) \
            -> pl.Tensor[[2, 2, 1, 32], pl.FP32]:
        cache: pl.Tensor[[2, 2, 1, 32], pl.FP32] = pl.create_tensor([2, 2, 1, 32], dtype=pl.FP32)
        out: pl.Tensor[[2, 2, 1, 32], pl.FP32] = pl.scatter_update(cache, -2, index, rows)
        return out


def _half_cache(rows: int):
    @pl.program
    class HalfCache:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, index: pl.Tensor[[1, 4], pl.INT32], src: pl.Tensor[[4, 256], pl.FP16]) \
                -> pl.Tensor[[rows, 256], pl.FP16]:
            cache: pl.Tensor[[rows, 256], pl.FP16] = pl.create_tensor([rows, 256], dtype=pl.FP16)
            out: pl.Tensor[[rows, 256], pl.FP16] = pl.scatter_update(cache, -2, index, src)
            return out
    return HalfCache


def test_four_dim_cache_is_refused_on_chip():
    with pytest.raises(UnsupportedError, match="only 2D input/src"):
        convert_tensor_to_tile_ops()(FourDimCache)


def test_two_byte_destination_past_the_i16_index_range_is_refused():
    with pytest.raises(UnsupportedError, match="i16 flat-index limit"):
        convert_tensor_to_tile_ops()(_half_cache(128))      # 128 x 256 = 32768 elements
    convert_tensor_to_tile_ops()(_half_cache(64))           # 16384 elements: lowers
