"""pl.slice(..., valid_shape=..., pad_value=...) on an on-chip tensor: the window's type carries the
pad, ConvertTensorToTileOps hands it to tile.slice, and the simulators fill the region outside the
valid part with it (a GM window with a pad is a clear error: its load would not pad)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls


@pl.program
class PaddedWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        local = pl.create_tensor([16, 64], dtype=pl.FP32)
        local = pl.assemble(local, x, [0, 0])
        window = pl.slice(local, [8, 32], [0, 0], valid_shape=[8, 8], pad_value=pl.PadValue.min)
        whole = pl.set_validshape(window, 8, 32)      # widen back: the columns past 8 hold the pad
        out = pl.assemble(out, whole, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        out = self.k(x, out)
        return out


def test_the_window_type_records_the_pad():
    window = PaddedWindow["k"].body.stmts[2].var
    assert window.type.tensor_view.pad is pl.PadValue.min


def test_conversion_forwards_the_pad_to_tile_slice():
    k = passes.convert_tensor_to_tile_ops()(passes.convert_to_ssa()(PaddedWindow))["k"]
    [window] = op_calls(k, "tile.slice")
    assert window.kwargs == {"pad_value": pl.PadValue.min}
    assert window.type.tile_view.pad is pl.PadValue.min


def test_a_gm_window_with_a_pad_is_rejected():
    @pl.program
    class GmPad:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[8, 32], pl.FP32], out: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
            window = pl.slice(x, [8, 32], [0, 0], valid_shape=[8, 8], pad_value=pl.PadValue.max)
            out = pl.assemble(out, window, [0, 0])
            return out

    with pytest.raises(PyptoError, match="pad_value=...\\) of a GM tensor is not supported yet"):
        passes.convert_tensor_to_tile_ops()(passes.convert_to_ssa()(GmPad))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_outside_the_valid_columns_reads_the_pad(platform):
    x = np.random.default_rng(5).uniform(-1, 1, (8, 32)).astype(np.float32)
    out = np.zeros((8, 32), np.float32)
    run(PaddedWindow, x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out[:, :8], x[:, :8])
    assert np.isneginf(out[:, 8:]).all() or (out[:, 8:] == np.finfo(np.float32).min).all()
