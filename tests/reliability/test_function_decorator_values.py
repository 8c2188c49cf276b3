"""`@pl.function(level=..., role=...)` values of the wrong kind are errors at the keyword, not a
mislabelled function found (without a location) when the program runs."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.language.parser.diagnostics import ParserTypeError

_TEMPLATE = """
import pypto.language as pl

@pl.program
class P:
    @pl.function({keyword})
    def host(self, x: pl.Tensor[[4, 16], pl.FP32]):
        pass
"""


@pytest.mark.parametrize("keyword, message", [
    ("level=pl.Level.HOST, role='bogus'", r"role= expects pl.Role.Orchestrator or pl.Role.SubWorker, got 'bogus'"),
    ("level=pl.Level.HOST, role=pl.Level.HOST", r"role= expects .*got .*HOST"),
    ("level='HOST', role=pl.Role.Orchestrator", r"level= expects pl.Level.X, got 'HOST'"),
    ("level=3", r"level= expects pl.Level.X, got 3"),
])
def test_a_wrong_level_or_role_value_is_an_error_at_its_keyword(keyword, message):
    text = _TEMPLATE.format(keyword=keyword)
    with pytest.raises(ParserTypeError, match=message) as info:
        pl.parse(text)
    assert info.value.span is not None and info.value.span.begin_line == 6
