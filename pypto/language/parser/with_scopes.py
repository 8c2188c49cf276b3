"""Block scopes written as `with`: `pl.at(level=..., ...)`, `pl.cluster()`, `pl.spmd(n)`.

    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):   → InCoreScopeStmt (outlined later)
    with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker): → HierarchyScopeStmt
    with pl.cluster():                                       → ClusterScopeStmt
    with pl.spmd(4, sync_start=True):                        → SpmdScopeStmt
    with pld.comm_domain([buf], devices=[0, 1]):             → CommDomainScopeStmt (host orchestrators)

A scope's body is straight-line code of the enclosing function: names assigned inside stay
visible after it.
"""

from __future__ import annotations

import ast

from pypto.ir.enums import Level, Role, SplitMode
from pypto.ir.stmt import ClusterScopeStmt, CommDomainScopeStmt, HierarchyScopeStmt, InCoreScopeStmt, SpmdScopeStmt
from pypto.language import scopes
from pypto.ir.expr import Var
from pypto.ir.walks import preorder
from pypto.language.parser import dump_tags, task_graph
from pypto.language.parser.calls import eval_call_parts
from pypto.language.parser.diagnostics import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.language.parser.dispatch import eval_expr, parse_body, statement
from pypto.language.parser.values import describe_value

_AT_KWARGS = {"level", "role", "optimizations", "name_hint", "windowize"}


@statement(ast.With)
def parse_with(ctx, node: ast.With):
    span = ctx.span(node)
    if len(node.items) != 1:
        raise UnsupportedFeatureError("a with statement opens exactly one pl scope", span)
    item = node.items[0]
    call = item.context_expr
    callee = eval_expr(ctx, call.func) if isinstance(call, ast.Call) else None
    if callee in (scopes.manual_scope, scopes.scope):
        if item.optional_vars is not None:
            raise ParserSyntaxError(f"pl.{callee.__name__}() binds no name", span)
        return task_graph.parse_runtime_scope(ctx, callee, call, node.body, span)
    if callee not in (scopes.at, scopes.cluster, scopes.spmd, scopes.incore, scopes.comm_domain):
        raise ParserSyntaxError("a kernel with statement opens pl.at(...), pl.cluster(...) or pl.spmd(...)", span)
    if item.optional_vars is not None and callee not in (scopes.at, scopes.spmd):
        raise UnsupportedFeatureError(f"`with pl.{callee.__name__}(...) as name`: only pl.at and pl.spmd regions "
                                      "are tasks with a TaskId", span)
    call, pred_node = task_graph.split_predicate(call)
    if callee in (scopes.at, scopes.spmd):
        task_graph.check_deps_syntax(ctx, call, f"pl.{callee.__name__}()")
    args, kwargs = eval_call_parts(ctx, call)
    _check_scope_options(kwargs, {k.arg: ctx.span(k) for k in call.keywords if k.arg}, span)
    if callee in (scopes.at, scopes.spmd):
        if callee is scopes.spmd and "deps" in kwargs and item.optional_vars is None:
            raise UnsupportedFeatureError("pl.spmd() does not accept 'deps=' here", span,
                                          hint="bind the region with `with pl.spmd(n, deps=[...]) as tid:`")
        options = task_graph.scope_options(ctx, kwargs, pred_node, span, what=f"pl.{callee.__name__}")
    elif pred_node is not None:
        raise ParserSyntaxError(f"pl.{callee.__name__} has no predicate=", span)
    ctx.push_block()
    inside_cluster, inside_spmd = ctx.cluster_depth, ctx.spmd_depth
    ctx.cluster_depth = inside_cluster + (callee is scopes.cluster)
    ctx.spmd_depth = inside_spmd + (callee is scopes.spmd)
    try:
        parse_body(ctx, node.body)
    finally:
        ctx.cluster_depth, ctx.spmd_depth = inside_cluster, inside_spmd
    body = ctx.pop_block(span)
    if callee in (scopes.at, scopes.spmd):     # the task's options go before it, now that its body is known
        if callee is scopes.at and not (ctx.cluster_depth or ctx.spmd_depth):   # (a lane is no task of its own)
            options["dumps"] = _with_tagged_reads(ctx, options.get("dumps") or [], body)
        task_graph.emit_options(ctx, span, **options)
    if callee is scopes.at:
        ctx.emit(_at_scope(body, args, kwargs, span))
    elif callee is scopes.incore:
        if args or set(kwargs) - {"name_hint"}:
            raise ParserSyntaxError("pl.incore takes only name_hint=", span)
        ctx.emit(InCoreScopeStmt(body, kwargs.get("name_hint", ""), SplitMode.NONE, span))
    elif callee is scopes.comm_domain:
        ctx.emit(_comm_domain_scope(body, args, kwargs, span))
    elif callee is scopes.cluster:
        if args or set(kwargs) - {"name_hint"}:
            raise ParserSyntaxError("pl.cluster takes only name_hint=", span)
        ctx.emit(ClusterScopeStmt(body, kwargs.get("name_hint", ""), span))
    else:
        ctx.emit(spmd_scope(body, args, kwargs, span))
    if item.optional_vars is not None:
        task_graph.bind_task_id(ctx, item.optional_vars, span)


def _with_tagged_reads(ctx, dumps: list, body) -> list:
    """A pl.at task's dumps= with the pl.dump_tag'd tensors its body reads added (parser/dump_tags.py)."""
    if not ctx.dump_tags:
        return dumps
    read = {id(n) for n in preorder(body) if isinstance(n, Var)}
    tagged = dump_tags.tagged_in(ctx, [t.var for t in ctx.dump_tags if id(t.var) in read])
    return list(dumps) + [v for v in tagged if not any(v is d for d in dumps)]


def _check_scope_options(kwargs: dict, spans: dict, span) -> None:
    """Options every scope shares, checked before the body is parsed so the error is at the keyword:
    name_hint becomes part of generated function names (a Python identifier or empty), optimizations
    is a list of pl.split(...) / pl.cross_core_slot(...)."""
    if "name_hint" in kwargs:
        hint = kwargs["name_hint"]
        if not isinstance(hint, str):
            raise ParserTypeError(f"name_hint= must be a string, got {describe_value(hint)}",
                                  spans.get("name_hint", span), hint='e.g. name_hint="row_sum"')
        if hint and not hint.isidentifier():
            raise ParserSyntaxError(f"name_hint={hint!r} is not a valid name (letters, digits and _, not starting "
                                    "with a digit)", spans.get("name_hint", span))
    if "optimizations" in kwargs:
        opts = kwargs["optimizations"]
        opts = getattr(opts, "elements", opts)
        if opts is not None and not isinstance(opts, (list, tuple)):
            raise ParserTypeError(f"optimizations= must be a list such as [pl.split(pl.SplitMode.UP_DOWN)], got "
                                  f"{describe_value(kwargs['optimizations'])}", spans.get("optimizations", span))


def _at_scope(body, args, kwargs, span):
    names = ["level", "role"]
    if len(args) > 2:
        raise ParserSyntaxError("pl.at takes (level, role) positionally; other options are keywords", span)
    for name, value in zip(names, args):
        kwargs.setdefault(name, value)
    unknown = set(kwargs) - _AT_KWARGS
    if unknown:
        raise ParserSyntaxError(f"pl.at() got an unexpected keyword argument '{sorted(unknown)[0]}'", span,
                                hint="accepted: level, role, optimizations, name_hint, windowize")
    level = kwargs.get("level")
    if not isinstance(level, Level):
        raise ParserTypeError(f"pl.at needs level=pl.Level.X, got {describe_value(level)}", span)
    role = kwargs.get("role")
    if role is not None and not isinstance(role, Role):
        raise ParserTypeError(f"pl.at role must be pl.Role.X, got {describe_value(role)}", span)
    name_hint = kwargs.get("name_hint", "")
    split = SplitMode.NONE
    slots = {}
    for opt in kwargs.get("optimizations") or []:
        if isinstance(opt, scopes.SplitOption):
            split = opt.mode
            if opt.slot_num is not None:
                slots.setdefault("slot_num", opt.slot_num)
        elif isinstance(opt, scopes.CrossCoreSlotOption):
            slots.update(slot_num=opt.slot_num, local_slot_num=opt.local_slot_num)
        else:
            raise UnsupportedFeatureError(f"pl.at optimization {describe_value(opt)} is not supported yet", span,
                                          hint="supported: pl.split(mode), pl.cross_core_slot(slot_num=...)")
    windowize = kwargs.get("windowize", False)
    if not isinstance(windowize, bool):
        raise ParserTypeError(f"pl.at windowize must be True or False, got {describe_value(windowize)}", span)
    if level is Level.CORE_GROUP and role is None:
        return InCoreScopeStmt(body, name_hint, split, span, windowize=windowize, **slots)
    if windowize:
        raise ParserSyntaxError("windowize=True applies to pl.at(level=pl.Level.CORE_GROUP)", span)
    if split is not SplitMode.NONE:
        raise ParserSyntaxError("optimizations=[pl.split(...)] applies to pl.at(level=pl.Level.CORE_GROUP)", span)
    return HierarchyScopeStmt(body, level, role, name_hint, span)


def spmd_scope(body, args, kwargs, span):
    unknown = set(kwargs) - {"core_num", "sync_start", "name_hint"}
    if unknown:
        raise UnsupportedFeatureError(f"pl.spmd(..., {sorted(unknown)[0]}=...) is not supported yet", span)
    core_num = args[0] if args else kwargs.get("core_num")
    if core_num is None:
        raise ParserSyntaxError("pl.spmd needs the core count: pl.spmd(4)", span)
    return SpmdScopeStmt(body, task_graph.core_count_expr(core_num, span, "pl.spmd"),
                         bool(kwargs.get("sync_start", False)), kwargs.get("name_hint", ""), span)


def _comm_domain_scope(body, args, kwargs, span):
    if len(args) != 1 or set(kwargs) - {"devices", "name_hint"}:
        raise ParserSyntaxError("pld.comm_domain takes ([window buffers], devices=[...] or None, name_hint=...)", span)
    buffers = args[0].elements if hasattr(args[0], "elements") else args[0]
    devices = kwargs.get("devices")
    devices = getattr(devices, "elements", devices)
    return CommDomainScopeStmt(body, list(buffers),
                               None if devices is None else [int(getattr(d, "value", d)) for d in devices],
                               kwargs.get("name_hint", ""), span)
