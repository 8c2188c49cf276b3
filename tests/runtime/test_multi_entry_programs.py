"""A chip program with several top-level Orchestration functions: each is an entry of its own, picked by
name (`compiled["name"]` or `compiled.name`); a plain call would have to guess, so it raises."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

R, C = 16, 32


@pl.program
class ScaleOrShift:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.mul(pl.load(x, [0, 0], [R, C]), 3.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.add(pl.load(x, [0, 0], [R, C]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def tripled(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return self.scale(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def bumped(self, x: pl.Tensor[[R, C], pl.FP32], z: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return self.shift(x, z)


def test_entries_are_picked_by_name_and_run_their_own_kernels(tmp_path):
    compiled = ir.compile(ScaleOrShift, output_dir=tmp_path)
    assert compiled.orchestration_names == ["tripled", "bumped"]
    x = np.random.default_rng(4).standard_normal((R, C)).astype(np.float32)
    y = np.zeros_like(x)
    compiled["tripled"](x, y)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
    z = compiled.bumped(x)                                   # attribute access, return style
    np.testing.assert_allclose(z, x + 1, rtol=1e-6)
    bumped = compiled.bumped
    assert bumped is compiled["bumped"] and bumped.name == "bumped" and bumped.param_names == ["x", "z"]
    assert set(bumped.lowered.functions) == {"bumped", "shift"}      # only what the entry calls
    assert bumped.output_dir == tmp_path / "next_levels" / "bumped"
    assert (bumped.output_dir / "kernel_config.py").is_file()
    with pytest.raises(TypeError, match="select one explicitly"):
        compiled(x, y)
    with pytest.raises(KeyError, match="tripled, bumped"):
        compiled["missing"]
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        compiled.missing


def test_an_orchestration_called_by_another_is_not_an_entry():
    @pl.program
    class Nested:
        @pl.function(type=pl.FunctionType.InCore)
        def neg(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            return pl.store(pl.neg(pl.load(x, [0, 0], [R, C])), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def inner(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            return self.neg(x, y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def outer(self, x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            return self.inner(x, y)

    compiled = ir.compile(Nested)
    x = np.ones((R, C), np.float32)
    np.testing.assert_array_equal(compiled(x), -x)          # one top-level entry: a plain call runs it
    assert compiled.name == "outer"
