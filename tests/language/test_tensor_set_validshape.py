"""pl.set_validshape on a kernel tensor: a metadata-only narrowing of its valid region that
ConvertTensorToTileOps lowers to tile.set_validshape on the loaded tile."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls


@pl.program
class Narrowed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        part = pl.set_validshape(x, 16, 24)
        grown = pl.exp(part)
        out = pl.assemble(out, grown, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out = self.k(x, out)
        return out


def test_the_tensor_form_carries_the_valid_region_in_its_type():
    part = Narrowed["k"].body.stmts[0].var
    assert [d.value for d in part.type.tensor_view.valid_shape] == [16, 24]
    assert [d.value for d in part.type.shape] == [32, 32]


def test_conversion_narrows_the_loaded_tile():
    k = passes.convert_tensor_to_tile_ops()(passes.convert_to_ssa()(Narrowed))["k"]
    [narrow] = op_calls(k, "tile.set_validshape")
    assert narrow.args[0].type.memory_space is pl.Mem.Vec
    assert [d.value for d in narrow.type.tile_view.valid_shape] == [16, 24]


def test_a_region_past_the_tensor_is_rejected():
    with pytest.raises(PyptoError, match="outside the tile extent|outside"):
        @pl.program
        class TooWide:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
                part = pl.set_validshape(x, 16, 40)
                out = pl.assemble(out, part, [0, 0])
                return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_valid_region_is_computed(platform):
    x = np.random.default_rng(3).uniform(-1, 1, (32, 32)).astype(np.float32)
    out = np.full((32, 32), -7.0, np.float32)
    run(Narrowed, x, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out[:16, :24], np.exp(x[:16, :24]), rtol=1e-6)   # outside it: undefined
