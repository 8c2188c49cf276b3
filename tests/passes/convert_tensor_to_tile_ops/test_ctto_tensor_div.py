"""tensor.div broadcasts and promotes like numpy; ConvertTensorToTileOps lowers it to the tile division
the vector unit has (tile.div on one shape and dtype, tile.row_expand_div for an [M, 1] float divisor)
and refuses the pairs it has no instruction for. Each accepted form also runs numpy-equal."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InternalError, ValueCheckError
from pypto.ir.equality import assert_structural_equal
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.walks import preorder
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run

RNG = np.random.default_rng(5)


def _incore_calls(program, name="kernel"):
    return [n.op.name for n in preorder(program.get_function(name).body)
            if isinstance(n, Call) and not isinstance(n.op, GlobalVar)]


@pl.program
class RowDivide:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP32], d: pl.Tensor[[16, 1], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
        q: pl.Tensor[[16, 32], pl.FP32] = pl.div(x, d)
        return q


@pl.program
class RowDivideLowered:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP32], d: pl.Tensor[[16, 1], pl.FP32],
               ret0_out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        x_tile: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32], [16, 32],
                                                                      target_memory=pl.Mem.Vec)
        d_tile: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.load(d, [0, 0], [16, 1], [16, 1],
                                                                     target_memory=pl.Mem.Vec)
        q: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_div(x_tile, d_tile)
        stored: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(q, [0, 0], ret0_out)
        return stored


def test_row_divisor_becomes_row_expand_div():
    assert_structural_equal(convert_tensor_to_tile_ops()(RowDivide), RowDivideLowered)


def _kernel(lhs_shape, lhs_dtype, rhs_shape, rhs_dtype):
    out_dtype = lhs_dtype if lhs_dtype is rhs_dtype else pl.FP32
    out_shape = [max(a, b) for a, b in zip(lhs_shape, rhs_shape)]

    @pl.program
    class Div:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[lhs_shape, lhs_dtype], b: pl.Tensor[rhs_shape, rhs_dtype]) \
                -> pl.Tensor[out_shape, out_dtype]:
            q: pl.Tensor[out_shape, out_dtype] = pl.div(a, b)
            return q
    return Div


def test_mixed_dtypes_meet_in_the_result_dtype_before_tdiv():
    after = convert_tensor_to_tile_ops()(_kernel([8, 16], pl.INT16, [8, 16], pl.FP32))
    calls = _incore_calls(after)
    assert calls.count("tile.cast") == 1 and "tile.div" in calls


def test_mixed_float_row_divisor_casts_the_dividend():
    after = convert_tensor_to_tile_ops()(_kernel([8, 64], pl.FP16, [8, 1], pl.FP32))
    calls = _incore_calls(after)
    assert "tile.row_expand_div" in calls and calls.count("tile.cast") == 1


@pytest.mark.parametrize("lhs, rhs, dtype, error, words", [
    ([8, 64], [8, 1], pl.INT32, InternalError, "supports only FP16 or FP32"),
    ([8, 1], [8, 64], pl.FP32, InternalError, "row-vector lhs"),
    ([1, 64], [8, 64], pl.FP32, ValueCheckError, "same physical shape"),
])
def test_broadcasts_without_an_instruction_are_refused(lhs, rhs, dtype, error, words):
    with pytest.raises(error, match=words):
        convert_tensor_to_tile_ops()(_kernel(lhs, dtype, rhs, dtype))


@pl.program
class MixedRowDivide:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP16], r: pl.Tensor[[16, 1], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.div(a, r), [0, 0])
        return out


@pl.program
class MixedDivide:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 32], pl.INT16], b: pl.Tensor[[8, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.div(a, b), [0, 0])
        return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_row_and_mixed_division_match_numpy(platform):
    a = RNG.standard_normal((16, 64)).astype(np.float16)
    r = (RNG.random((16, 1)) + 0.5).astype(np.float32)
    got = np.zeros((16, 64), np.float32)
    run(MixedRowDivide, config=RunConfig(platform=platform))(a, r, got)
    np.testing.assert_allclose(got, a.astype(np.float32) / r, rtol=1e-6)

    x = RNG.integers(-100, 100, (8, 32)).astype(np.int16)
    y = (RNG.random((8, 32)) + 0.25).astype(np.float32)
    got = np.zeros((8, 32), np.float32)
    run(MixedDivide, config=RunConfig(platform=platform))(x, y, got)
    np.testing.assert_allclose(got, x.astype(np.float32) / y, rtol=1e-6)
