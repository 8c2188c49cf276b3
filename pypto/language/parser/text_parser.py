"""Text entry points under the reference's module path (`pypto.language.parser.text_parser`).

    prog = text_parser.parse(ir.python_print(prog))      # same as pl.parse
"""

from __future__ import annotations

from typing import Optional


def parse(text: str, filename: str = "<string>", *, globals: Optional[dict] = None):
    """DSL text → Program (or Function when the text defines one function and no program)."""
    from pypto.language.parser import parse_source
    return parse_source(text, filename=filename, globals=globals)


def parse_program(text: str, filename: str = "<string>", *, globals: Optional[dict] = None):
    """DSL text → Program (a lone function is wrapped into a one-function program)."""
    import pypto.language as pl
    return pl.parse_program(text, filename, globals=globals)
