"""The parser's error classes: every user mistake in a kernel body becomes one of these.

They carry the span of the offending source (file:line:col in the user's own file), a hint
and an optional note; `str(err)` is the one-line form, `err.render()` the compiler form:

    error: Undefined variable 'tmp'
      --> kernel.py:12:17
       |
    12 |         y = pl.add(tmp, x)
       |                    ^^^
       = help: did you mean 'tile'?
"""

from __future__ import annotations

import difflib
import sys
from typing import Iterable, Optional

from pypto.errors import PyptoError
from pypto.env import color_disabled
from pypto.ir.span import Span


class ParserError(PyptoError):
    """Base of all errors the DSL parser raises for user mistakes."""

    def __str__(self) -> str:  # SyntaxError would print its own `msg` field instead
        return str(self.args[0]) if self.args else self.message

    def render(self, color: Optional[bool] = None) -> str:
        text = super().render()
        if color is None:
            color = sys.stderr.isatty() and not color_disabled()
        if not color:
            return text
        from pypto.language.parser.diagnostics.renderer import colorize
        return colorize(text)


class ParserSyntaxError(ParserError, SyntaxError):
    """A construct is written in a form the DSL does not accept."""


class ParserTypeError(ParserError, TypeError):
    """An annotation or value has the wrong type, shape or dtype."""


class UndefinedVariableError(ParserError, NameError):
    """A name is used that is not defined in the kernel, its closure or its module."""


class SSAViolationError(ParserError):
    """A name is rebound where single assignment is required (`strict_ssa=True`)."""

    def __init__(self, message: str, span: Optional[Span] = None, *, hint: str = "", note: str = "",
                 previous_span: Optional[Span] = None):
        self.previous_span = previous_span
        if previous_span is not None and previous_span.is_known() and not note:
            note = f"previous definition at {previous_span}"
        super().__init__(message, span, hint=hint, note=note)


class UnsupportedFeatureError(ParserError, NotImplementedError):
    """A Python statement or DSL feature the parser does not translate."""


class InvalidOperationError(ParserError):
    """An unknown op, or an op / construct used where it is not allowed."""


class ScopeIsolationError(ParserError):
    """A value defined in one scope is used where that scope does not reach."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    if not close:
        return ""
    return "did you mean " + ", ".join(repr(c) for c in close) + "?"
