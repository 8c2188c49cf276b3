"""high_precision on div / log / recip / rsqrt: kept through ConvertTensorToTileOps, spelled as PTOAS's
precision attribute (rsqrt's precise form is a scratch operand), same values on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.codegen.pto import generate
from pypto.errors import PyptoError
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls


@pl.program
class Precise:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        inv_root = pl.rsqrt(x, high_precision=True)
        ratio = pl.div(inv_root, y, high_precision=True)
        logged = pl.log(ratio, high_precision=True)
        flipped = pl.recip(logged, high_precision=True)
        out = pl.assemble(out, flipped, [0, 0])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(x, y, out)
        return out


def _converted_kernel():
    return passes.convert_tensor_to_tile_ops()(passes.convert_to_ssa()(Precise))["k"]


def test_the_tile_ops_keep_the_precise_mode_and_rsqrt_gets_a_scratch_tile():
    k = _converted_kernel()
    for name in ("tile.div", "tile.log", "tile.recip"):
        [call] = op_calls(k, name)
        assert call.kwargs == {"high_precision": True}
    [rsqrt] = op_calls(k, "tile.rsqrt")
    assert len(rsqrt.args) == 2 and rsqrt.kwargs == {}
    scratch = rsqrt.args[1].type
    assert scratch.dtype == pl.FP32 and [d.value for d in scratch.shape] == [16, 64]


def test_the_default_mode_is_not_spelled():
    @pl.program
    class Plain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
            r = pl.rsqrt(x)
            q = pl.recip(r)
            out = pl.assemble(out, q, [0])
            return out

    k = passes.convert_tensor_to_tile_ops()(passes.convert_to_ssa()(Plain))["k"]
    assert "high_precision" not in str(k)
    [rsqrt] = op_calls(k, "tile.rsqrt")
    assert len(rsqrt.args) == 1


def test_the_precise_mode_needs_a_float_result():
    with pytest.raises(PyptoError, match="high_precision=True needs an FP16 or FP32"):
        @pl.program
        class IntDiv:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, a: pl.Tensor[[64], pl.INT32], b: pl.Tensor[[64], pl.INT32],
                  out: pl.Out[pl.Tensor[[64], pl.INT32]]) -> pl.Tensor[[64], pl.INT32]:
                out = pl.assemble(out, pl.div(a, b, high_precision=True), [0])
                return out


def test_pto_spells_the_precision_attribute_after_outs_and_rsqrt_reads_its_scratch():
    text = generate(ir.compile(Precise).lowered)["k"]
    for kind, instr in (("div_precision", "pto.tdiv"), ("log_precision", "pto.tlog"),
                        ("recip_precision", "pto.trecip")):
        [line] = [ln for ln in text.splitlines() if ln.strip().startswith(instr + " ")]
        assert f") {{precisionType = #pto<{kind} high_precision>}}" in line
    [rsqrt] = [ln for ln in text.splitlines() if ln.strip().startswith("pto.trsqrt ")]
    assert rsqrt.split(" ins(")[1].split(" : ")[0].count("%") == 2


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_values_match_numpy_on_both_simulators(platform):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 4.0, (16, 64)).astype(np.float32)
    y = rng.uniform(0.05, 0.2, (16, 64)).astype(np.float32)
    out = np.zeros((16, 64), np.float32)
    run(Precise, x, y, out, config=RunConfig(platform=platform))
    expected = 1.0 / np.log((1.0 / np.sqrt(x)) / y)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
