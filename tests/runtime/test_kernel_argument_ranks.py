"""An orchestration that passes a tensor of another rank than the kernel parameter declares fails
at the call, naming the parameter and both shapes, instead of inside the kernel's first store
(found by the mutation fuzzer: an orchestration annotation `[1, 64, 1]` feeding a kernel's `[1, 64]`).
Static shapes are compared when the call is parsed (pypto/language/parser/calls.py); a symbolic dim leaves
the rank check to the simulator's call site."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import SimulationError, TypeCheckError
from pypto.runtime import RunConfig


def doubled(orchestration_shape):
    @pl.program
    class Doubled:
        @pl.function(type=pl.FunctionType.InCore)
        def twice(self, x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [1, 64])
            y = pl.store(pl.add(t, t), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[orchestration_shape, pl.FP32],
                 y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
            y = self.twice(x, y)
            return y

    return Doubled


def test_a_static_shape_of_another_rank_is_refused_when_the_call_is_parsed():
    with pytest.raises(TypeCheckError, match=r"twice\(\): argument 'x' expects a tensor of shape \[1, 64\], "
                                             r"got shape \[1, 64, 1\]"):
        doubled([1, 64, 1])


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_tensor_of_another_rank_is_refused_at_the_call(platform):
    compiled = ir.compile(doubled([pl.dynamic("R"), 64, 1]), platform=platform)    # the rank is known at run time
    x, y = np.ones((1, 64, 1), np.float32), np.zeros((1, 64), np.float32)
    with pytest.raises(SimulationError, match=r"twice\(\): the tensor passed for parameter 'x' has shape \[1, 64, 1\]"):
        compiled(x, y, config=RunConfig(platform=platform))
    assert not y.any()                              # a failed run leaves the caller's output as it was


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_matching_ranks_run(platform):
    compiled = ir.compile(doubled([1, 64]), platform=platform)
    x, y = np.arange(64, dtype=np.float32).reshape(1, 64), np.zeros((1, 64), np.float32)
    compiled(x, y, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(y, 2 * x)
