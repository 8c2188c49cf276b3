"""The dispatch tables: AST node class → handler, filled by the syntax-kind modules
(expressions, calls, subscripts, statements, control_flow, scopes) when they are imported.

    @statement(ast.Pass)
    def parse_pass(ctx, node): ...
"""

from __future__ import annotations

import ast

from pypto.errors import PyptoError
from pypto.language.parser.diagnostics import UnsupportedFeatureError

STMT_HANDLERS: dict = {}
EXPR_HANDLERS: dict = {}

SUPPORTED_STATEMENTS = ("assignment (x = ..., x: T = ...)", "augmented assignment (x += ...)", "return",
                        "expression / op call", "if / else", "for ... in pl.range / pl.parallel / pl.unroll / "
                        "pl.pipeline / pl.while_ / pl.split_aiv", "while", "with pl.at / pl.cluster / pl.spmd",
                        "break", "continue", "pass")


def statement(*node_types):
    def register(fn):
        for t in node_types:
            STMT_HANDLERS[t] = fn
        return fn
    return register


def expression(*node_types):
    def register(fn):
        for t in node_types:
            EXPR_HANDLERS[t] = fn
        return fn
    return register


def parse_stmt(ctx, node: ast.stmt) -> None:
    handler = STMT_HANDLERS.get(type(node))
    if handler is None:
        raise UnsupportedFeatureError(f"Unsupported statement type: {type(node).__name__}", ctx.span(node),
                                      hint="supported statements: " + "; ".join(SUPPORTED_STATEMENTS))
    with_span(ctx, node, handler, ctx, node)


_JUMPS = {ast.Return: "return", ast.Break: "break", ast.Continue: "continue"}


def parse_body(ctx, body: list) -> None:
    for k, node in enumerate(body):
        parse_stmt(ctx, node)
        jump = _JUMPS.get(type(node))
        if jump and k + 1 < len(body):      # code after it never runs (a second return made outputs NaN)
            from pypto.language.parser.diagnostics import ParserSyntaxError
            raise ParserSyntaxError(f"unreachable code: this statement follows a `{jump}` in the same block",
                                    ctx.span(body[k + 1]), hint=f"delete it, or move the `{jump}` to the end")


def eval_expr(ctx, node: ast.expr):
    """Evaluate an expression to an IR Expr or a compile-time Python value."""
    handler = EXPR_HANDLERS.get(type(node))
    if handler is None:
        raise UnsupportedFeatureError(f"Unsupported expression: {type(node).__name__}", ctx.span(node),
                                      hint="kernels accept names, constants, arithmetic, comparisons, calls, "
                                           "subscripts, attributes, lists and tuples")
    return with_span(ctx, node, handler, ctx, node)


def with_span(ctx, node, fn, *args):
    """Run a handler; errors raised without a location get this node's span, and a Python
    exception that escapes (a parser bug) becomes an InternalError at this node."""
    try:
        return fn(*args)
    except PyptoError as e:
        raise e.with_span(ctx.span(node))
    except (RecursionError, Warning):            # a PyptoWarning the caller's filters turned into an error
        raise
    except Exception as e:  # noqa: BLE001 - never let a bare traceback reach the user
        from pypto.errors import InternalError
        raise InternalError(f"parser failed on this {type(node).__name__}: {type(e).__name__}: {e}",
                            ctx.span(node), hint="this is a pypto bug; please report it with this kernel") from e
