"""Where parsed code comes from: locating a decorated class / function in its file, and
turning AST positions into `Span`s of the user's original file.

Decorated objects are found by parsing their whole file and matching the decorator line
(`sys._getframe().f_lineno` at decoration time), so spans need no offset arithmetic; when
the file is unavailable we fall back to `inspect.getsource` plus a line/column offset.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass
from typing import Optional

from pypto.ir.span import Span
from pypto.language.parser.diagnostics import ParserSyntaxError


@dataclass
class SourceFile:
    """The text a tree was parsed from, and how its positions map back to the user's file."""
    filename: str
    lines: list
    line_offset: int = 0
    col_offset: int = 0

    def is_printed_ir(self) -> bool:
        """The compiler's own printed IR (a pass dump, a round trip): user-mistake checks do not apply."""
        return bool(self.lines) and self.lines[0].startswith("# pypto.program:")

    def span(self, node) -> Span:
        line = getattr(node, "lineno", None)
        if line is None:
            return Span(self.filename)
        col = (getattr(node, "col_offset", 0) or 0) + self.col_offset
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        end_col = col + 1 if end_col is None else end_col + self.col_offset
        text = self.lines[line - 1].rstrip("\n") if 0 < line <= len(self.lines) else ""
        return Span(self.filename, line + self.line_offset, col + 1, end_line + self.line_offset, end_col + 1, text=text)


def parse_text(text: str, filename: str) -> tuple[ast.Module, SourceFile]:
    src = SourceFile(filename, text.splitlines())
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as e:
        span = Span(filename, e.lineno or 0, e.offset or 0, text=(e.text or "").rstrip("\n"))
        raise ParserSyntaxError(f"invalid Python syntax: {e.msg}", span) from None
    return tree, src


_FILE_TREES: dict = {}


def _file_tree(filename: str):
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return None, None
    key = (filename, len(lines), hash(lines[0]), hash(lines[-1]))
    cached = _FILE_TREES.get(filename)
    if cached is not None and cached[0] == key:
        return cached[1], cached[2]
    try:
        tree = ast.parse("".join(lines), filename=filename)
    except SyntaxError:
        return None, None
    src = SourceFile(filename, [ln.rstrip("\n") for ln in lines])
    _FILE_TREES[filename] = (key, tree, src)
    return tree, src


def locate_definition(obj, kind: type, filename: Optional[str] = None, lineno: Optional[int] = None):
    """Find the ClassDef / FunctionDef of `obj`: returns (node, SourceFile)."""
    name = obj.__name__
    if filename is None:
        code = getattr(obj, "__code__", None)
        filename = code.co_filename if code is not None else inspect.getsourcefile(obj)
        if lineno is None and code is not None:
            lineno = code.co_firstlineno
        if lineno is None:
            lineno = getattr(obj, "__firstlineno__", None)
    tree, src = _file_tree(filename) if filename else (None, None)
    if tree is not None:
        candidates = [n for n in ast.walk(tree) if isinstance(n, kind) and n.name == name]
        for n in candidates:
            first = min([n.lineno] + [d.lineno for d in n.decorator_list])
            if lineno is not None and (first == lineno or n.lineno == lineno
                                       or any(d.lineno == lineno for d in n.decorator_list)):
                return n, src
        if len(candidates) == 1 or (candidates and lineno is None):
            return candidates[0], src
    return _from_inspect(obj, kind)


def _from_inspect(obj, kind: type):
    try:
        lines, lnum = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError) as e:
        raise ParserSyntaxError(f"cannot read the source of '{obj.__name__}': {e}",
                                hint="define kernels in a .py file, or build them from text with pl.parse") from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(raw.splitlines()[0]) - len(text.splitlines()[0]) if text.strip() else 0
    tree = ast.parse(text)
    for n in ast.walk(tree):
        if isinstance(n, kind) and n.name == obj.__name__:
            return n, SourceFile(filename, raw.splitlines(), line_offset=max(lnum, 1) - 1, col_offset=indent)
    raise ParserSyntaxError(f"cannot find the definition of '{obj.__name__}' in its source")
