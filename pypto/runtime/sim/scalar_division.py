"""Scalar division in generated code, with the device's answers where Python's differ.

Python raises ZeroDivisionError for `x / 0`, `x // 0` and `x % 0`. The scalar unit follows IEEE 754
for floats (1.0 / 0 is inf, 0.0 / 0 is nan), so a float division by zero is data, as an overflow in a
tile op is. An integer division by zero has no defined result: it is a SimulationError, which the
scheduler places at the user's line (a raw ZeroDivisionError would read as an internal fault).
"""

from __future__ import annotations

import math

from pypto.errors import SimulationError


def _ieee_quotient(x, y) -> float:
    """x / y for y == 0 (+0.0 or -0.0), as IEEE 754 divides."""
    x = float(x)
    if x == 0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, float(y))


def float_truediv(x, y):
    try:
        return x / y
    except ZeroDivisionError:
        return _ieee_quotient(x, y)


def float_floordiv(x, y):
    try:
        return x // y
    except ZeroDivisionError:
        return _ieee_quotient(x, y)          # floor(±inf) is ±inf, floor(nan) is nan


def float_floormod(x, y):
    try:
        return x % y
    except ZeroDivisionError:
        return math.nan                      # (fmod's answer for a zero divisor)


def _int_zero(op: str, x):
    raise SimulationError(f"integer division by zero in a scalar expression ({x} {op} 0)",
                          hint="guard the divisor, or compute in a float dtype (x / 0 is then inf, as on the device)")


def int_truediv(x, y):
    if y == 0:
        _int_zero("/", x)
    return x / y


def int_floordiv(x, y):
    if y == 0:
        _int_zero("//", x)
    return x // y


def int_floormod(x, y):
    if y == 0:
        _int_zero("%", x)
    return x % y


HELPERS = {("truediv", True): float_truediv, ("floordiv", True): float_floordiv, ("floormod", True): float_floormod,
           ("truediv", False): int_truediv, ("floordiv", False): int_floordiv, ("floormod", False): int_floormod}
