"""HOST SubWorkers: Python callbacks of a distributed program, kept as Python source instead of DSL.

A `@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)` runs on the host, between chip
dispatches, with the host tensors it is called with (numpy arrays, or torch tensors when the
call was given torch tensors). Its body is ordinary Python, so the parser does not read it as a
kernel: it keeps the function's source (`attrs["host_source"]`, and the line it starts on) and
the runtime compiles that text against the defining module's globals. A body of only `...`
(after an optional docstring) declares an abstract callback point instead
(`attrs["runtime_bound"]`), whose implementation `compiled.prepare(callbacks={name: fn})` binds.
A bare `pass` is a concrete callback that does nothing.
"""

from __future__ import annotations

import ast
import textwrap

from pypto.language.parser.diagnostics import ParserSyntaxError

# the defining module's globals per source file, for the runtime to compile a concrete body against
MODULE_GLOBALS: dict = {}


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def is_abstract_body(node: ast.FunctionDef) -> bool:
    rest = [s for s in node.body if not _is_docstring(s)]
    return len(rest) == 1 and isinstance(rest[0], ast.Expr) and isinstance(rest[0].value, ast.Constant) \
        and rest[0].value.value is Ellipsis


def sub_worker_attrs(ctx, node: ast.FunctionDef, attrs: dict) -> dict:
    if "host_source" in attrs or attrs.get("runtime_bound"):
        return {}                                # printed IR read back: the attrs already say what it is
    args = node.args.args
    if args and args[0].arg == "self":
        raise ParserSyntaxError(f"HOST SubWorker '{node.name}' takes 'self'", ctx.span(args[0]),
                                hint="a SubWorker is a plain host function: declare it without self "
                                     "(its parameters are the tensors the host orchestrator passes)")
    if is_abstract_body(node):
        return {"runtime_bound": True}
    source = ctx.env.source
    MODULE_GLOBALS[source.filename] = ctx.env.globals
    text = textwrap.dedent("\n".join(source.lines[node.lineno - 1:node.end_lineno]))
    # the def line in the user's file: the runtime pads the text so tracebacks land on the user's lines
    return {"host_source": text, "host_source_line": node.lineno + source.line_offset}
