"""A scalar division by zero in a kernel (fuzz seed 34: `1.0 / i` at i = 0 in a scale factor) raised
Python's ZeroDivisionError inside the simulator, reported as an internal fault. The device's scalar unit
divides floats as IEEE 754 does, so a float quotient is inf / nan and the kernel goes on; an integer
division by zero has no answer and is a SimulationError at the user's line."""

import math

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InternalError, SimulationError
from pypto.runtime import RunConfig
from pypto.runtime.sim import scalar_division


def _scaled(form):
    @pl.jit
    def scaled(x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                t = pl.load(x, [i * 16, 0], [16, 64])
                if form == "float":
                    s = 1.0 / i
                elif form == "floordiv":
                    s = 64 // i
                else:
                    s = 64 % i
                pl.store(pl.muls(t, s), [i * 16, 0], y)
        return y
    return scaled


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_float_quotient_by_zero_is_inf_as_on_the_device(platform):
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    _scaled("float")(x, y, config=RunConfig(platform=platform))
    assert np.isposinf(y[:16]).all()
    np.testing.assert_array_equal(y[16:32], 1.0)
    np.testing.assert_allclose(y[48:], 1.0 / 3, rtol=1e-6)


@pytest.mark.parametrize("form, op", [("floordiv", "//"), ("floormod", "%")])
def test_an_integer_division_by_zero_is_an_error_at_the_line(form, op):
    x = np.ones((64, 64), np.float32)
    y = np.full_like(x, 5.0)
    with pytest.raises(SimulationError, match=f"integer division by zero in a scalar expression \\(64 {op} 0\\)") \
            as info:
        _scaled(form)(x, y)
    assert not isinstance(info.value, InternalError)
    assert f"s = 64 {op} i" in info.value.span.text
    assert (y == 5.0).all()                        # a failed run changes nothing


@pytest.mark.parametrize("x, y, want", [(1.0, 0, math.inf), (-2.0, 0, -math.inf), (3.0, -0.0, -math.inf),
                                        (0.0, 0, math.nan), (math.nan, 0.0, math.nan), (7.0, 2.0, 3.5)])
def test_float_truediv_follows_ieee(x, y, want):
    got = scalar_division.float_truediv(x, y)
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_float_floor_forms_by_zero():
    assert scalar_division.float_floordiv(5.0, 0.0) == math.inf
    assert math.isnan(scalar_division.float_floormod(5.0, 0.0))
    assert scalar_division.float_floordiv(7.0, 2.0) == 3.0 and scalar_division.float_floormod(7.0, 2.0) == 1.0
