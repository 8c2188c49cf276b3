"""One function definition → `ir.Function`: decorator options, parameters (annotations,
directions, jit overrides), return types, body.

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from pypto.ir.enums import FunctionType, Level, ParamDirection, Role
from pypto.ir.expr import Var
from pypto.ir.function import Function
from pypto.ir.stmt import ReturnStmt, SeqStmts, flatten_to_stmts
from pypto.ir.types import TensorType, Type
from pypto.language.parser.annotations import BARE_SHAPED, eval_annotation, eval_return_annotation
from pypto.language.parser.context import FunctionContext, ModuleEnv, Signature
from pypto.language.parser.diagnostics import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.language.parser.dispatch import eval_expr, parse_body, with_span
from pypto.language.parser.dump_tags import warn_unconsumed

import pypto.language.parser.expressions  # noqa: F401  (registers handlers)
import pypto.language.parser.calls  # noqa: F401
import pypto.language.parser.subscripts  # noqa: F401
import pypto.language.parser.statements  # noqa: F401
import pypto.language.parser.control_flow  # noqa: F401
import pypto.language.parser.with_scopes  # noqa: F401


@dataclass
class FunctionOptions:
    """What `@pl.function(...)` says about a function."""
    func_type: FunctionType = FunctionType.Opaque
    level: Optional[Level] = None
    role: Optional[Role] = None
    attrs_node: Optional[ast.expr] = None     # evaluated with the parameters in scope
    attrs: dict = field(default_factory=dict)
    strict_ssa: bool = False
    auto_scope: bool = True                   # False: the function places its own AUTO runtime scopes (pl.scope())


_DECORATOR_KWARGS = {"type", "level", "role", "attrs", "strict_ssa", "auto_scope", "external_source"}


def read_decorator_options(ctx: FunctionContext, deco: ast.expr) -> FunctionOptions:
    """Options of a `@pl.function` / `@pl.function(...)` decorator, read from its AST."""
    opts = FunctionOptions()
    if not isinstance(deco, ast.Call):
        return opts
    if deco.args:
        raise ParserSyntaxError("@pl.function takes keyword arguments only", ctx.span(deco))
    for kw in deco.keywords:
        if kw.arg not in _DECORATOR_KWARGS:
            raise ParserSyntaxError(f"@pl.function got an unexpected keyword argument '{kw.arg}'", ctx.span(kw.value),
                                    hint="accepted: type, level, role, attrs, strict_ssa")
        if kw.arg == "attrs":
            opts.attrs_node = kw.value
            continue
        value = eval_expr(ctx, kw.value)
        if kw.arg == "type":
            if not isinstance(value, FunctionType):
                raise ParserTypeError(f"type= expects pl.FunctionType.X, got {value!r}", ctx.span(kw.value))
            opts.func_type = value
        elif kw.arg == "level":
            if value is not None and not isinstance(value, Level):
                raise ParserTypeError(f"level= expects pl.Level.X, got {value!r}", ctx.span(kw.value))
            opts.level = value
        elif kw.arg == "role":
            if value is not None and not isinstance(value, Role):
                raise ParserTypeError(f"role= expects pl.Role.Orchestrator or pl.Role.SubWorker, got {value!r}",
                                      ctx.span(kw.value))
            opts.role = value
        elif kw.arg == "strict_ssa":
            opts.strict_ssa = bool(value)
        elif kw.arg == "auto_scope":
            if not isinstance(value, bool):
                raise ParserTypeError(f"auto_scope= must be True or False, got {value!r}", ctx.span(kw.value))
            opts.auto_scope = value
        elif kw.arg == "external_source" and value is not None:
            raise UnsupportedFeatureError("external_source= (hand-written kernels) is not supported",
                                          ctx.span(kw.value))
    return opts


def _params(node: ast.FunctionDef, method: bool) -> list:
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        raise UnsupportedFeatureError("kernel parameters must be plain positional parameters", None)
    params = list(a.args)
    if a.defaults:
        raise UnsupportedFeatureError(f"parameter defaults are not supported ('{params[-len(a.defaults)].arg}')", None)
    if method and params and params[0].arg == "self":
        params = params[1:]          # a method without `self` is a static helper: every parameter is its own
    return params


def bind_params(ctx: FunctionContext, node: ast.FunctionDef, method: bool, overrides: Optional[dict] = None):
    """Evaluate parameter annotations in order, binding each parameter (later ones may use earlier dims)."""
    overrides = overrides or {}
    params, directions = [], []
    for p in with_span(ctx, node, _params, node, method):
        span = ctx.span(p)
        ov = overrides.get(p.arg)
        if ov is not None and not isinstance(ov, Type):  # scalar specialization: the param becomes a constant
            ctx.bind(p.arg, ov, span)
            continue
        if p.annotation is None and ov is None:
            raise ParserTypeError(f"Parameter '{p.arg}' missing type annotation", span,
                                  hint="annotate it, e.g. a: pl.Tensor[[64, 64], pl.FP32]")
        direction = None
        t = None
        if p.annotation is not None:
            t, direction = eval_annotation(ctx, p.annotation, allow_bare=True, allow_direction=True)
        if ov is not None:
            t = ov
        if isinstance(t, type) and t in BARE_SHAPED:
            raise ParserTypeError(f"Parameter '{p.arg}' has an incomplete annotation pl.{t.__name__}", span,
                                  hint=f"give the shape and dtype: pl.{t.__name__}[[64, 64], pl.FP32] "
                                       "(bare annotations are filled only by @pl.jit)")
        var = Var(p.arg, t, span)
        ctx.bind(p.arg, var, span)
        if direction in (ParamDirection.Out, ParamDirection.InOut):
            ctx.written_params.add(var)
        elif isinstance(t, TensorType):
            ctx.input_params.add(var)
        params.append(var)
        directions.append(direction if direction is not None else ParamDirection.In)
    return params, directions


def signature_of(env: ModuleEnv, node: ast.FunctionDef, method: bool) -> Signature:
    """Param types and return types without parsing the body (for calls between functions)."""
    ctx = FunctionContext(env, func_name=node.name)
    params, directions = bind_params(ctx, node, method)
    returns = with_span(ctx, node.returns or node, eval_return_annotation, ctx, node.returns)
    return Signature(node.name, [p.name_hint for p in params], [p.type for p in params], directions, returns)


def parse_function_def(env: ModuleEnv, node: ast.FunctionDef, opts: FunctionOptions, *, method: bool,
                       overrides: Optional[dict] = None, name: Optional[str] = None) -> Function:
    ctx = FunctionContext(env, strict_ssa=opts.strict_ssa, func_name=node.name)
    ctx.host_level = getattr(opts.level, "name", None) == "HOST"     # x[r] shards stacked host tensors
    ctx.func_type = opts.func_type
    ctx.auto_scope = opts.auto_scope
    params, directions = bind_params(ctx, node, method, overrides)
    # an Orchestration function's In tensors are the caller's arrays: an op writing one is the forgotten pl.Out
    # (in the user's source; printed IR may write them after InlineFunctions placed an inline body there)
    ctx.caller_inputs = set(ctx.input_params) if opts.func_type is FunctionType.Orchestration \
        and not env.source.is_printed_ir() else set()
    return_types = with_span(ctx, node.returns or node, eval_return_annotation, ctx, node.returns)
    attrs = dict(opts.attrs)
    if opts.attrs_node is not None:
        value = eval_expr(ctx, opts.attrs_node)
        if not isinstance(value, dict):
            raise ParserTypeError("attrs= expects a dict", ctx.span(opts.attrs_node))
        attrs.update(value)
    ctx.return_types = return_types
    if opts.role is Role.SubWorker and ctx.host_level:
        from pypto.language.parser.host_sub_worker import sub_worker_attrs
        attrs.update(sub_worker_attrs(ctx, node, attrs))   # a Python callback: its body is not DSL
        return Function(name or node.name, params, return_types or [], SeqStmts([], ctx.span(node)),
                        opts.func_type, param_directions=directions, level=opts.level, role=opts.role, attrs=attrs,
                        span=ctx.span(node))
    parse_body(ctx, node.body)
    warn_unconsumed(ctx.dump_tags)
    if return_types and not any(isinstance(n, ast.Return) for stmt in node.body for n in ast.walk(stmt)):
        raise ParserSyntaxError(f"'{node.name}' declares a return type but never returns a value",
                                ctx.span(node.returns), hint="end the function with `return <value>`, or drop the "
                                                             "-> annotation")
    attrs.update(ctx.func_attrs)
    body = ctx.pop_block(ctx.span(node))
    if return_types is None:
        return_types = _inferred_returns(body)
    return Function(name or node.name, params, return_types, body, opts.func_type, param_directions=directions,
                    level=opts.level, role=opts.role, attrs=attrs, span=ctx.span(node))


def _inferred_returns(body) -> list:
    for s in reversed(flatten_to_stmts(body)):
        if isinstance(s, ReturnStmt):
            return [v.type for v in s.values]
    return []

