"""`pl.at(...)` options of the wrong kind are parser errors at the keyword (they used to crash passes or
the simulator's code generator far from the user's line)."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import PyptoError

TEMPLATE = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.Orchestration)
def main(a: pl.Tensor[[64, 128], pl.FP32], c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
    with pl.at(level=pl.Level.CORE_GROUP, {option}):
        t = pl.load(a, [0, 0], [64, 128])
        c = pl.store(t, [0, 0], c)
    return c
"""


@pytest.mark.parametrize("option, message", [
    ("name_hint=-1", r"name_hint= must be a string, got"),
    ("name_hint=[1, 2]", r"name_hint= must be a string, got"),
    ("name_hint=3.5", r"name_hint= must be a string, got"),
    ('name_hint="2 cols"', r"name_hint='2 cols' is not a valid name"),
    ("optimizations=3.5", r"optimizations= must be a list"),
])
def test_bad_scope_option_is_an_error_at_the_keyword(option, message):
    with pytest.raises(PyptoError, match=message) as info:
        pl.parse(TEMPLATE.format(option=option))
    span = info.value.span
    assert span is not None and "with pl.at(" in span.text
    assert span.text[span.column - 1:].startswith(option.split("=")[0])      # the caret is at the keyword


def test_good_scope_options_still_parse():
    program = pl.parse(TEMPLATE.format(option='name_hint="copy_rows", optimizations=[]'))
    assert "copy_rows" in str(program)
