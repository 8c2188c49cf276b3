"""The pypto error hierarchy: every user mistake is a `PyptoError` carrying a span.

`str(err)` is a one-line "file:line:col: message" form (what tests and logs read);
`err.render()` is the compiler-style form with the source line, a caret and the hint.
Internal invariant failures raise `InternalError`, never dressed as user errors.
Each class also subclasses the builtin the reference project raises for the same failure, so callers
catch them the same way: TypeCheckError is a TypeError, ValueCheckError a ValueError,
UnsupportedError a NotImplementedError and a ValueError, InternalError a RuntimeError.
"""

from __future__ import annotations

import linecache
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # errors.py is a leaf module: no runtime imports from pypto
    from pypto.ir.span import Span


class PyptoWarning(UserWarning):
    """A kernel that compiles but probably does not do what its author meant (shown at the user's line)."""


class PyptoError(Exception):
    """Base of all errors pypto raises on purpose."""

    def __init__(self, message: str, span: Optional[Span] = None, *, hint: str = "", note: str = ""):
        self.message = message
        self.span = span if span is not None and span.is_known() else None
        self.hint = hint
        self.note = note
        super().__init__(self._one_line())

    def _one_line(self) -> str:
        where = f"{self.span.filename}:{self.span.line}:{self.span.column}: " if self.span else ""
        text = f"{where}{self.message}"
        if self.hint:
            text += f" (help: {self.hint})"
        return text

    def with_span(self, span: Optional[Span]) -> "PyptoError":
        """Attach a span if the error has none yet (errors raised deep in type rules)."""
        if self.span is None and span is not None and span.is_known():
            self.span = span
            self.args = (self._one_line(),)
        return self

    def render(self) -> str:
        """The compiler-style form: message, location, source line with caret, help, note."""
        lines = [f"error: {self.message}"]
        if self.span:
            lines.append(f"  --> {self.span.filename}:{self.span.line}:{self.span.column}")
            src = self.span.source_line() or linecache.getline(self.span.filename, self.span.line).rstrip("\n")
            if src:
                width = len(str(self.span.line))
                lines.append(f"{' ' * width} |")
                lines.append(f"{self.span.line} | {src}")
                caret_len = max(1, (self.span.end_column - self.span.column)
                                if self.span.end_line == self.span.line and self.span.end_column > self.span.column else 1)
                lines.append(f"{' ' * width} | {' ' * max(0, self.span.column - 1)}{'^' * caret_len}")
        if self.hint:
            lines.append(f"   = help: {self.hint}")
        if self.note:
            lines.append(f"   = note: {self.note}")
        return "\n".join(lines)


class InternalError(PyptoError, RuntimeError):
    """A compiler invariant failed: a pypto bug, not a user mistake (a RuntimeError, like the reference's)."""


class TypeCheckError(PyptoError, TypeError):
    """An op or statement received operands of the wrong type, shape or dtype."""


class ValueCheckError(PyptoError, ValueError):
    """An op received a value it cannot accept (bad kwarg, out-of-range constant, ...)."""


class UnsupportedError(PyptoError, NotImplementedError, ValueError):
    """A feature that is not built (yet) or that the target cannot do. Also a ValueError: the reference
    rejects the same inputs (a strided collective target, a DN layout, ...) with ValueError."""


class CapacityError(PyptoError):
    """On-chip buffers do not fit the platform's memory capacity."""


class DeadlockError(PyptoError):
    """The simulator found agents that can never run again."""


class DataRaceError(PyptoError):
    """Two tasks with no dependency between them touched the same bytes of a buffer, at least one writing."""


class SimulationError(PyptoError):
    """The simulated machine rejected an operation (bad address, illegal data path, ...)."""
