"""The user's source location of a call into pypto: the first stack frame outside the pypto package.

Errors about how a kernel is *called* or *decorated* (wrong argument count, a list where an array
belongs, an unknown keyword) carry this span, so the message points at the user's line, not at ours.
"""

from __future__ import annotations

import difflib
import os
import sys

from pypto.ir.span import NO_SPAN, Span

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def called_from_user_code(depth: int = 1) -> bool:
    """Whether the frame `depth` levels above the caller of this function is outside the pypto package."""
    frame = sys._getframe(depth + 1)
    return frame is not None and not os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)


def user_call_span() -> Span:
    """The span of the innermost frame whose code is not pypto's own (NO_SPAN if there is none)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return NO_SPAN
    line, end_line, col, end_col = frame.f_lineno, frame.f_lineno, 0, 0
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions) and positions[index][0]:
        line, end_line, col, end_col = (p if p is not None else 0 for p in positions[index])
    return Span(frame.f_code.co_filename, line, col + 1, end_line, end_col + 1)


def reject_unknown_options(decorator: str, unknown: dict, known: tuple) -> None:
    """An unknown decorator keyword is a user error at the decorator line, naming it and the valid ones."""
    from pypto.errors import ValueCheckError
    name = next(iter(unknown))
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]}=?" if close else f"valid keywords: {', '.join(known)}"
    raise ValueCheckError(f"{decorator} got an unexpected keyword argument '{name}'", user_call_span(), hint=hint)
