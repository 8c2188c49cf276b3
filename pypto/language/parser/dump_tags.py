"""`pl.dump_tag(t)`: the declarative selective-dump marker of an orchestration.

    pl.dump_tag(q)                    → no statement; q is remembered (by Var, not by name)
    r = self.kernel(q, k, out)        → Call(..., attrs={"dump_vars": [q]})
    out = self.other(r, out)          → q is not an argument: no dump_vars
    with pl.at(level=CORE_GROUP): ... → the scope's task options list q in dumps= when its body reads q

The marker is consumed at parse time: every later kernel call of the same function that takes
the tagged value as an argument records it in the call's `dump_vars` attr (a list of Vars, in
argument order), which later passes carry with the call and the printer writes as
`attrs={"dump_vars": [...]}`. Rebinding the name (`q = self.k(q)`) ends the tag: the new value
is a different value even where the parser reuses the Var. A tag that no later call consumes
marks nothing; it is accepted (as in the reference) with a PyptoWarning at its line.

Only Orchestration and Inline functions (and `@pl.inline` helpers expanded into one) may tag:
a kernel body has no call site whose argument could be dumped.
"""

from __future__ import annotations

import ast
import warnings

from pypto.errors import PyptoWarning
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Var
from pypto.ir.types import TensorType
from pypto.language.parser.diagnostics import ParserSyntaxError, ParserTypeError
from pypto.language.parser.values import describe_value

ATTR = "dump_vars"
_TAGGING_FUNCTIONS = (FunctionType.Orchestration, FunctionType.Inline)


class DumpTag:
    """One `pl.dump_tag(name)` statement: the Var it marks, where it was written, whether a call took it."""
    __slots__ = ("var", "span", "consumed", "live")

    def __init__(self, var: Var, span):
        self.var, self.span, self.consumed, self.live = var, span, False, True


def parse_dump_tag(ctx, call: ast.Call) -> None:
    """`pl.dump_tag(t)` at statement position: remember t's Var for the calls that follow."""
    span = ctx.span(call)
    if ctx.func_type not in _TAGGING_FUNCTIONS:
        kind = f"{ctx.func_type.name} " if ctx.func_type is not None else ""
        raise ParserSyntaxError(f"pl.dump_tag() marks a tensor for the kernel calls of an Orchestration or Inline "
                                f"function; '{ctx.func_name}' is {kind}function without such calls", span,
                                hint="place pl.dump_tag(t) in the orchestration that passes t to the kernel")
    if len(call.args) != 1 or call.keywords:
        raise ParserSyntaxError("pl.dump_tag() takes exactly one tensor name", span, hint="pl.dump_tag(q)")
    target = call.args[0]
    if not isinstance(target, ast.Name):
        raise ParserSyntaxError("pl.dump_tag() takes a bare variable name", ctx.span(target),
                                hint="bind the value to a name first (q2 = ...; pl.dump_tag(q2))")
    var = ctx.lookup(target.id, target)
    if not isinstance(var, Var) or not isinstance(var.type, TensorType):
        raise ParserTypeError(f"pl.dump_tag() marks a tensor; '{target.id}' is {describe_value(var)}",
                              ctx.span(target), hint="only tensors passed to kernels can be dumped")
    if not any(t.var is var and t.live for t in ctx.dump_tags):
        ctx.dump_tags.append(DumpTag(var, span))


def end_tag(ctx, var) -> None:
    """`name = ...` rebinds a tagged name: the new value is not tagged (even when the Var is reused)."""
    for tag in ctx.dump_tags:
        if tag.var is var:
            tag.live = False


def tagged_in(ctx, values) -> list:
    """The tagged Vars among values (argument order, each once); marks those tags as consumed."""
    found = []
    for v in values:
        for tag in ctx.dump_tags:
            if tag.live and tag.var is v:
                tag.consumed = True
                if not any(v is f for f in found):
                    found.append(v)
    return found


def call_attrs(ctx, attrs, args: list, span) -> dict:
    """A kernel call's attrs with the tagged arguments merged into `dump_vars` (printed IR brings its own)."""
    attrs = dict(attrs or {})
    given = attrs.get(ATTR)
    given = list(getattr(given, "elements", given) or [])
    for v in given:
        if not isinstance(v, Var):
            raise ParserTypeError(f"attrs['{ATTR}'] lists tensor variables, got {describe_value(v)}", span)
    merged = list(given)
    for v in tagged_in(ctx, args):
        if not any(v is g for g in merged):
            merged.append(v)
    if merged:
        attrs[ATTR] = merged
    else:
        attrs.pop(ATTR, None)
    return attrs


def warn_unconsumed(tags) -> None:
    """At the end of a function: a tag no call took marks nothing (the reference drops it silently)."""
    for tag in tags:
        if not tag.consumed:
            span = tag.span
            warnings.warn_explicit(f"{span}: pl.dump_tag({tag.var.name_hint}) marks nothing: no later kernel call "
                                   f"takes '{tag.var.name_hint}' as an argument", PyptoWarning,
                                   span.filename or "<pypto>", span.line or 0)
