"""Rendering of diagnostics: terminal colours, and an excepthook that prints an uncaught user
error (any pypto error but InternalError) in the compiler form instead of a compiler-internal
traceback."""

from __future__ import annotations

import sys

from pypto.env import backtrace_requested


def install_excepthook() -> None:
    """Uncaught user errors print the compiler-style diagnostic instead of a traceback through
    the compiler (set PTO_BACKTRACE=1 to get the Python traceback as well). InternalError is a
    pypto bug, so it keeps its traceback."""
    previous = sys.excepthook
    if getattr(previous, "_pypto_parser_hook", False):
        return

    def hook(exc_type, exc, tb):
        if _is_user_error(exc) and not backtrace_requested():
            print(exc.render(), file=sys.stderr)
            print("(run with PTO_BACKTRACE=1 to see the Python traceback)", file=sys.stderr)
            return
        previous(exc_type, exc, tb)
    hook._pypto_parser_hook = True
    sys.excepthook = hook


def _is_user_error(exc) -> bool:
    from pypto.errors import InternalError, PyptoError
    return isinstance(exc, PyptoError) and not isinstance(exc, InternalError)


def colorize(text: str) -> str:
    red, blue, bold, reset = "\033[31m", "\033[34m", "\033[1m", "\033[0m"
    out = []
    for line in text.splitlines():
        if line.startswith("error:"):
            line = f"{bold}{red}error{reset}{bold}:{line[6:]}{reset}"
        elif line.lstrip().startswith("-->") or line.rstrip().endswith("|"):
            line = f"{blue}{line}{reset}"
        elif set(line.split("|")[-1].strip()) == {"^"}:
            head, _, caret = line.rpartition("|")
            line = f"{blue}{head}|{reset}{red}{caret}{reset}"
        elif line.lstrip().startswith("= "):
            line = f"{bold}{line}{reset}"
        out.append(line)
    return "\n".join(out)
