"""Loop and predicate mistakes found by the mutation fuzzer, each a pypto error at the user's line: a run-time
0 step of pl.range (Python's range() raised a bare ValueError), a float loop bound (a TypeError in the
simulator), a predicate= index outside its tensor (an IndexError in the scheduler)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InternalError, SimulationError, TypeCheckError
from pypto.runtime import RunConfig


@pl.jit
def doubled_in_steps(x: pl.Tensor, out: pl.Out[pl.Tensor], step: pl.Scalar[pl.INDEX]):
    for i in pl.range(0, 4, step):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [i * 16, 0], [16, 64])
            pl.store(pl.add(t, t), [i * 16, 0], out)
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_zero_step_is_an_error_at_the_loop(platform):
    x = np.ones((64, 64), np.float32)
    out = np.zeros_like(x)
    doubled_in_steps(x, out, 1, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, 2 * x)
    out[:] = 0
    with pytest.raises(SimulationError, match="step is 0 at run time") as info:
        doubled_in_steps(x, out, 0, config=RunConfig(platform=platform))
    assert not isinstance(info.value, InternalError)
    assert "pl.range(0, 4, step)" in info.value.span.text
    assert not out.any()


def test_a_float_loop_bound_is_an_error_at_the_loop():
    from pypto.language.parser.diagnostics.exceptions import ParserTypeError

    @pl.jit
    def float_bound(x: pl.Tensor, lens: pl.Tensor, out: pl.Out[pl.Tensor]):
        n = pl.cast(pl.read(lens, [0]), pl.BF16)
        for i in pl.range(n):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [i * 16, 0], [16, 64])
                pl.store(t, [i * 16, 0], out)
        return out

    x = np.ones((64, 64), np.float32)
    with pytest.raises(ParserTypeError, match="bounds must be integer scalars, got a BF16 scalar") as info:
        float_bound(x, np.array([2], np.int32), np.zeros_like(x), config=RunConfig(platform="a2a3sim"))
    assert "pl.range(n)" in info.value.span.text


def test_a_predicate_index_outside_its_tensor_is_an_error_at_the_task():
    @pl.jit
    def gated(x: pl.Tensor, flags: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.spmd(1, predicate=(flags[9, 0] > 0)):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [0, 0], [16, 64])
                pl.store(pl.add(t, t), [0, 0], out)
        return out

    x = np.ones((16, 64), np.float32)
    out = np.zeros_like(x)
    with pytest.raises(SimulationError, match=r"predicate= reads element \[9, 0\] of a tensor of shape \[1, 8\]") as info:
        gated(x, np.ones((1, 8), np.int32), out, config=RunConfig(platform="a2a3sim"))
    assert "predicate=(flags[9, 0] > 0)" in info.value.span.text
    assert not out.any()


def test_an_index_times_a_float_is_a_float_so_a_slice_offset_of_it_is_refused_at_the_line():
    """`b * 1e-6` (a mistyped constant) was typed as the index's dtype and only failed in the simulator's
    tile.load; an integer scalar with a float one is a float, and the offset check names it (fuzz seed 30)."""
    text = """
import pypto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for b in pl.spmd(2):
            xb = pl.slice(x, [16, 32], [b * 1e-6, 0])
            y = pl.assemble(y, pl.add(xb, xb), [b * 16, 0])
        return y
"""
    with pytest.raises(TypeCheckError, match=r"tensor.slice: argument 'offset' must hold integers, got .*FP32") as info:
        pl.parse(text)
    assert info.value.span.begin_line == 9
