"""`@pl.inline` helpers (InlineFunction, what the decorator returns) and their expansion: the
helper's body is parsed at each call site, in its own name table, emitting its statements into
the caller's current block; its `return` value becomes the call's value (several values → a
tuple the caller unpacks).
"""

from __future__ import annotations

import ast
from typing import Optional

from pypto.language.parser.context import FunctionContext, ModuleEnv
from pypto.language.parser.diagnostics import ParserTypeError
from pypto.language.parser.dispatch import parse_body
from pypto.language.parser.dump_tags import warn_unconsumed


class InlineFunction:
    """`@pl.inline`: a helper whose body is expanded at every call site inside a kernel."""

    def __init__(self, pyfunc=None, namespace: Optional[dict] = None, *, _node=None, _source=None):
        self.pyfunc = pyfunc
        self.namespace = namespace or {}
        self._node, self._source = _node, _source
        self.__name__ = pyfunc.__name__ if pyfunc is not None else _node.name

    @classmethod
    def from_ast(cls, node, source, namespace: dict) -> "InlineFunction":
        return cls(None, namespace, _node=node, _source=source)

    def resolve(self):
        """(FunctionDef node, SourceFile, namespace) of the helper."""
        if self._node is None:
            from pypto.language.parser import closure_values
            from pypto.language.parser.source import locate_definition
            self._node, self._source = locate_definition(self.pyfunc, ast.FunctionDef)
            ns = dict(self.pyfunc.__globals__)
            ns.update(self.namespace)
            ns.update(closure_values(self.pyfunc))
            self.namespace = ns
        return self._node, self._source, self.namespace

    def __call__(self, *args, **kwargs):
        from pypto.language.scopes import KernelOnlyError
        raise KernelOnlyError(f"'{self.__name__}' is a @pl.inline helper: call it from inside a kernel body")


def expand_inline(ctx, node, inline_fn, args: list, kwargs: dict):
    fdef, source, namespace = inline_fn.resolve()
    span = ctx.span(node)
    env = ModuleEnv(source=source, globals=namespace, signatures=ctx.env.signatures,
                    resolve_return=ctx.env.resolve_return, auto_added=ctx.env.auto_added, in_program=ctx.env.in_program)
    child = FunctionContext(env, strict_ssa=ctx.strict_ssa, func_name=fdef.name)
    child.blocks = ctx.blocks
    child.control_depth = ctx.control_depth
    # the body lands in the caller: its task-graph state is the caller's, its own auto_scope= decides pl.scope()
    child.func_type = ctx.func_type
    child.manual_scope_depth, child.cluster_depth = ctx.manual_scope_depth, ctx.cluster_depth
    child.auto_scope = getattr(inline_fn, "auto_scope", ctx.auto_scope)
    child.inline_result = []
    child.dump_tags = list(ctx.dump_tags)      # the caller's tags reach the helper's calls; its own stay inside
    names = [a.arg for a in fdef.args.args]
    if names and names[0] == "self":
        names = names[1:]
    values = dict(zip(names, args))
    if len(args) > len(names):
        raise ParserTypeError(f"{fdef.name}() takes {len(names)} argument(s), got {len(args)}", span)
    for key, v in kwargs.items():
        if key not in names or key in values:
            raise ParserTypeError(f"{fdef.name}() got an unexpected or repeated argument '{key}'", span)
        values[key] = v
    missing = [n for n in names if n not in values]
    if missing:
        raise ParserTypeError(f"{fdef.name}() is missing argument '{missing[0]}'", span)
    for name in names:
        child.bind(name, values[name], span)
    parse_body(child, fdef.body)
    warn_unconsumed(child.dump_tags[len(ctx.dump_tags):])
    if not child.inline_result:
        return None
    result = child.inline_result[-1]
    return result[0] if len(result) == 1 else tuple(result)
