"""pl.scatter(input, mask_pattern=p, dst=d): each input row fills the columns of a dst row that the mask
pattern keeps (P0101: the even ones, P0001: one in four, P1111: all), dst elsewhere. tile.scatter_mask
(pto.tscatter's mask form) zero-fills its destination, so ConvertTensorToTileOps keeps dst with a
select, as for the index form. Checked on the op rules, the converted program, the PTO spelling and
numpy-equal runs on both simulators (incl. two patterns chained into one dst)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.codegen.pto import generate
from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP32
from pypto.ir.ops.registry import create_op_call
from pypto.ir.types import TileType
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run
from pypto.runtime.sim.ops import SIM_OPS
from pypto.runtime.sim.values import TileValue
from tests.helpers import op_names

RNG = np.random.default_rng(11)


def _expected(inp, dst, keep):
    out = dst.copy()
    cols = [c for c in range(dst.shape[1]) if c % 4 in keep]
    out[:, cols] = inp
    return out


def test_dst_must_be_the_source_times_the_pattern_stride():
    def tile(cols):
        return ir.Var("t", TileType([4, cols], FP32, memory_space=pl.Mem.Vec))
    assert create_op_call("tile.scatter_mask", [tile(16), tile(8)], {"mask_pattern": 1}).type.shape[1].value == 16
    create_op_call("tile.scatter_mask", [tile(16), tile(4)], {"mask_pattern": 3})
    create_op_call("tile.scatter_mask", [tile(16), tile(16)], {"mask_pattern": 7})
    with pytest.raises(TypeCheckError, match="needs dst 32 columns wide"):
        create_op_call("tile.scatter_mask", [tile(16), tile(8)], {"mask_pattern": 3})
    with pytest.raises(TypeCheckError, match="mask_pattern must be 1..7"):
        create_op_call("tile.scatter_mask", [tile(16), tile(8)], {"mask_pattern": 8})


def test_the_tile_op_zero_fills_the_columns_it_does_not_write():
    dst = np.full((4, 16), 9.0, np.float32)
    src = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = TileValue(dst.copy(), (4, 16))
    SIM_OPS["tile.scatter_mask"](None, out, TileValue(dst, (4, 16)), TileValue(src, (4, 8)), mask_pattern=2)
    np.testing.assert_array_equal(out.data, _expected(src, np.zeros_like(dst), {1, 3}))


@pl.program
class Chained:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, even: pl.Tensor[[4, 8], pl.FP32], odd: pl.Tensor[[4, 8], pl.FP32],
             dst: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            half = pl.scatter(even, mask_pattern=1, dst=dst)
            out = pl.assemble(out, pl.scatter(odd, mask_pattern=2, dst=half), [0, 0])
        return out


@pl.program
class Quarter:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[8, 4], pl.FP16], dst: pl.Tensor[[8, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[8, 16], pl.FP16]]) -> pl.Tensor[[8, 16], pl.FP16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.tensor.scatter(src, mask_pattern=5, dst=dst), [0, 0])
        return out


def test_conversion_blends_the_zero_filled_scatter_with_dst():
    @pl.program
    class One:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, inp: pl.Tensor[[4, 8], pl.FP32], dst: pl.Tensor[[4, 16], pl.FP32]) -> pl.Tensor[[4, 16], pl.FP32]:
            out: pl.Tensor[[4, 16], pl.FP32] = pl.tensor.scatter(inp, mask_pattern=1, dst=dst)
            return out

    names = op_names(convert_tensor_to_tile_ops()(One)["k"])
    assert "tensor.scatter_mask" not in names
    assert names.count("tile.scatter_mask") == 2 and "tile.cmps" in names and names[-2:] == ["tile.sel", "tile.store"]


def test_pto_spells_the_mask_form_of_tscatter():
    text = "\n".join(generate(ir.compile(Chained).lowered).values())
    assert 'maskPattern = #pto.mask_pattern<P0101>} : !pto.tile_buf<' in text
    assert text.count('"row") outs(') == 4


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_mask_scatters_match_numpy(platform):
    cfg = RunConfig(platform=platform)
    even, odd = (RNG.uniform(-1, 1, (4, 8)).astype(np.float32) for _ in range(2))
    dst = RNG.uniform(-1, 1, (4, 16)).astype(np.float32)
    got = np.zeros((4, 16), np.float32)
    run(Chained, config=cfg)(even, odd, dst, got)
    np.testing.assert_array_equal(got, _expected(odd, _expected(even, dst, {0, 2}), {1, 3}))

    src = RNG.uniform(-1, 1, (8, 4)).astype(np.float16)
    dst16 = RNG.uniform(-1, 1, (8, 16)).astype(np.float16)
    got16 = np.zeros((8, 16), np.float16)
    run(Quarter, config=cfg)(src, dst16, got16)
    np.testing.assert_array_equal(got16, _expected(src, dst16, {2}))
