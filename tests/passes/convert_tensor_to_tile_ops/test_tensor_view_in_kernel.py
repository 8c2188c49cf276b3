"""ConvertTensorToTileOps: a user-written `pl.tensor.view` inside a kernel is a zero-copy GM view.

It stays a GM op (no copy, no entry load of the viewed tensor); each converted op that reads the
view loads it where it is read, slices load their window of it, and stores into it write the viewed
tensor in place. Checked structurally and numpy-equal on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run


@pl.program
class ViewThenAdd:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            v: pl.Tensor[[16, 32], pl.FP32] = pl.tensor.view(x, [16, 32])
            w: pl.Tensor[[16, 32], pl.FP32] = pl.add(v, pl.exp(v))
            out = pl.assemble(out, w, [0, 0])
        return out


@pl.program
class SliceOfView:
    """The view is read through a slice (a window of the reshaped bytes) and written through another view."""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[4, 128], pl.FP32]]) -> pl.Tensor[[4, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            v: pl.Tensor[[32, 16], pl.FP32] = pl.tensor.view(x, [32, 16])
            lo: pl.Tensor[[16, 16], pl.FP32] = pl.slice(v, [16, 16], [16, 0])
            d: pl.Tensor[[16, 16], pl.FP32] = pl.mul(lo, lo)
            ov: pl.Tensor[[32, 16], pl.FP32] = pl.tensor.view(out, [32, 16])
            ov2: pl.Tensor[[32, 16], pl.FP32] = pl.assemble(ov, d, [0, 0])
            ov3: pl.Tensor[[32, 16], pl.FP32] = pl.assemble(ov2, lo, [16, 0])
        return out


def test_a_view_of_a_param_stays_a_gm_view_and_is_loaded_where_it_is_read():
    from pypto.passes.flatten_call_expr import flatten_call_expr
    from pypto.passes.outline_incore_scopes import outline_incore_scopes
    prog = outline_incore_scopes()(flatten_call_expr()(passes.convert_to_ssa()(ViewThenAdd)))
    after = passes.convert_tensor_to_tile_ops()(prog)
    k = next(f for f in after.functions.values() if f.func_type is pl.FunctionType.InCore)
    text = ir.python_print(k)
    assert "pl.tensor.view(x, [16, 32])" in text
    assert "pl.tile.load(x," not in text                 # no entry load of the viewed tensor
    assert text.count("pl.tile.load(v, [0, 0], [16, 32], [16, 32]") == 2   # each reader loads the view


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_loads_through_a_view_read_the_right_elements(platform):
    x = np.random.default_rng(11).uniform(-1, 1, (4, 128)).astype(np.float32)
    out = np.full((16, 32), np.nan, np.float32)
    run(ViewThenAdd, x, out, config=RunConfig(platform=platform))
    v = x.reshape(16, 32)
    np.testing.assert_allclose(out, v + np.exp(v), rtol=1e-6)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_slices_of_a_view_and_stores_into_a_view_address_the_viewed_tensor(platform):
    x = np.random.default_rng(12).uniform(-1, 1, (8, 64)).astype(np.float32)
    out = np.full((4, 128), np.nan, np.float32)
    run(SliceOfView, x, out, config=RunConfig(platform=platform))
    lo = x.reshape(32, 16)[16:32]
    np.testing.assert_allclose(out.reshape(32, 16), np.concatenate([lo * lo, lo]), rtol=1e-6)


@pl.program
class ViewOfAWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32]) -> pl.Tensor[[128], pl.FP32]:
        w: pl.Tensor[[8, 16], pl.FP32] = pl.slice(x, [8, 16], [0, 0])
        flat: pl.Tensor[[128], pl.FP32] = pl.tensor.view(w, [128])
        return flat


def test_a_view_of_a_value_lowered_to_a_tile_is_refused():
    from pypto.errors import ValueCheckError
    with pytest.raises(ValueCheckError, match="'w' is the result of an op lowered to Tile") as info:
        passes.convert_tensor_to_tile_ops()(ViewOfAWindow)
    assert info.value.span.line > 0
