"""Rendering of parser diagnostics: terminal colours, and an excepthook that prints an uncaught
parser error in the compiler form instead of a parser-internal traceback."""

from __future__ import annotations

import os
import sys


def install_excepthook() -> None:
    """Uncaught parser errors print the compiler-style diagnostic instead of a parser traceback
    (set PTO_BACKTRACE=1 to get the Python traceback as well)."""
    previous = sys.excepthook
    if getattr(previous, "_pypto_parser_hook", False):
        return

    def hook(exc_type, exc, tb):
        if isinstance(exc, _parser_error()) and os.environ.get("PTO_BACKTRACE", "") != "1":
            print(exc.render(), file=sys.stderr)
            print("(run with PTO_BACKTRACE=1 to see the Python traceback)", file=sys.stderr)
            return
        previous(exc_type, exc, tb)
    hook._pypto_parser_hook = True
    sys.excepthook = hook


def _parser_error():
    from pypto.language.parser.diagnostics.exceptions import ParserError
    return ParserError


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
