"""Control flow: `for` over pl.range / pl.parallel / pl.unroll / pl.pipeline / pl.while_,
plain `while`, and `if` / `else` — with or without carried values.

Explicit SSA form (what the printer emits and users may write):

    for i, (acc,) in pl.range(4, init_values=(t,)):
        a2 = pl.add(acc, t)
        acc_rv = pl.yield_(a2)          # acc_rv is bound after the loop

Without init_values / yields the body just rebinds names (non-SSA; ConvertToSSA fixes it).
An `if` on a compile-time condition is folded: only the taken branch is parsed.
"""

from __future__ import annotations

import ast
import builtins

from pypto.ir.dtypes import INDEX
from pypto.ir.enums import ForKind, SplitMode
from pypto.ir.expr import Expr, IterArg, Var
from pypto.ir.stmt import ForStmt, IfStmt, SplitAivScopeStmt, WhileStmt, YieldStmt
from pypto.ir.types import ScalarType
from pypto.language import scopes
from pypto.language.parser.calls import eval_call_parts
from pypto.language.parser.context import YieldFrame
from pypto.language.parser.diagnostics import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.language.parser.dispatch import eval_expr, parse_body, statement
from pypto.language.parser.values import describe_value, is_scalar_expr, to_expr

_LOOP_KINDS = {scopes.range: ForKind.Sequential, scopes.parallel: ForKind.Parallel, scopes.unroll: ForKind.Unroll,
               scopes.pipeline: ForKind.Pipeline}
_LOOP_KWARGS = {"init_values", "attrs", "stage", "unroll"}


@statement(ast.For)
def parse_for(ctx, node: ast.For):
    span = ctx.span(node)
    if node.orelse:
        raise UnsupportedFeatureError("for ... else is not supported", span)
    if not isinstance(node.iter, ast.Call):
        raise ParserSyntaxError("a kernel for loop iterates over pl.range(...), pl.parallel(...), pl.unroll(...), "
                                "pl.pipeline(...), pl.while_(...) or pl.split_aiv(...)", ctx.span(node.iter))
    callee = eval_expr(ctx, node.iter.func)
    if callee is builtins.range:
        raise ParserSyntaxError("kernel for loops must use pl.range() (or pl.parallel / pl.unroll / pl.pipeline), "
                                "not Python's range()", ctx.span(node.iter),
                                hint="replace range(...) with pl.range(...)")
    if callee is scopes.while_:
        return _parse_while_iter(ctx, node)
    if callee is scopes.split_aiv:
        return _parse_split_aiv(ctx, node)
    if callee is scopes.spmd:
        return _parse_spmd_for(ctx, node)
    kind = _LOOP_KINDS.get(callee) if not isinstance(callee, (list, dict)) else None
    if kind is None:
        raise ParserSyntaxError(f"cannot iterate over {describe_value(callee)} in a kernel", ctx.span(node.iter),
                                hint="use pl.range(...), pl.parallel(...), pl.unroll(...) or pl.pipeline(...)")
    args, kwargs = eval_call_parts(ctx, node.iter)
    unknown = set(kwargs) - _LOOP_KWARGS
    if unknown:
        raise ParserSyntaxError(f"pl.{callee.__name__}() got an unexpected keyword argument '{sorted(unknown)[0]}'",
                                span, hint="accepted: init_values=, attrs=, unroll=, stage= (pl.pipeline)")
    if not 1 <= len(args) <= 3:
        raise ParserSyntaxError(f"pl.{callee.__name__}() takes (stop), (start, stop) or (start, stop, step)", span)
    start, stop, step = ([0] + args + [1])[:3] if len(args) == 1 else (args + [1])[:3]
    bounds = [_bound(ctx, b, span, callee.__name__) for b in (start, stop, step)]
    attrs = dict(kwargs.get("attrs") or {})
    if "stage" in kwargs:
        if kind is not ForKind.Pipeline:
            raise ParserSyntaxError("stage= is only accepted by pl.pipeline", span)
        attrs = {"stage": kwargs["stage"], **attrs}
    inits = _init_values(kwargs, span)
    if "unroll" in kwargs:
        attrs["unroll_factor"] = _unroll_factor(kwargs["unroll"], bool(inits), span)
    loop_name, carry_names = _loop_target(ctx, node.target, bool(inits), span)
    if carry_names is not None and len(carry_names) != len(inits):
        raise ParserSyntaxError(f"Mismatch between carried values and init_values: the loop unpacks "
                                f"{len(carry_names)} but init_values has {len(inits)}", span)
    loop_var = Var(loop_name, ScalarType(INDEX), ctx.span(node.target))
    ctx.bind(loop_name, loop_var, loop_var.span)
    ctx.mark_region_var(loop_var)
    iter_args = _bind_iter_args(ctx, carry_names or [], inits, span)
    frame = _parse_loop_body(ctx, node.body, "for", span)
    return_vars = _return_vars(ctx, frame, iter_args, span, "loop")
    ctx.emit(ForStmt(loop_var, *bounds, iter_args=iter_args, body=frame.body, return_vars=return_vars, kind=kind,
                     attrs=attrs, span=span))


def _unroll_factor(value, has_inits: bool, span) -> int:
    """`pl.range(n, unroll=k)`: a partial-unroll request recorded as attrs["unroll_factor"]."""
    if isinstance(value, Expr) or isinstance(value, bool) or not isinstance(value, int):
        raise ParserTypeError(f"unroll must be a compile-time constant integer, got {describe_value(value)}", span)
    if value < 1:
        raise ParserTypeError(f"unroll factor must be >= 1, got {value}", span)
    if has_inits:
        raise ParserSyntaxError("unroll= cannot be combined with init_values=", span)
    return value


def _bound(ctx, v, span, fn: str) -> Expr:
    if isinstance(v, Expr) and not is_scalar_expr(v):
        raise ParserTypeError(f"pl.{fn}() bounds must be integers or scalars, got {describe_value(v)}", span)
    if not isinstance(v, Expr) and (isinstance(v, bool) or not isinstance(v, int)):
        raise ParserTypeError(f"pl.{fn}() bounds must be integers or scalars, got {describe_value(v)}", span)
    dtype = getattr(getattr(v, "type", None), "dtype", None)
    if dtype is not None and dtype.is_float():
        raise ParserTypeError(f"pl.{fn}() bounds must be integer scalars, got a {dtype.name} scalar", span,
                              hint="convert it first: pl.cast(x, pl.INDEX)")
    return to_expr(v, span)


def _init_values(kwargs: dict, span) -> list:
    inits = kwargs.get("init_values")
    if inits is None:
        return []
    if not isinstance(inits, (list, tuple)):
        inits = [inits]
    return [to_expr(v, span, "init value") for v in inits]


def _loop_target(ctx, target, has_inits: bool, span):
    """`i` or `i, (a, b)` → ("i", ["a", "b"] | None)."""
    if isinstance(target, ast.Name):
        if has_inits:
            raise ParserSyntaxError("the loop target must be `i, (a, b, ...)` when init_values= is given", span,
                                    hint="unpack the carried values: for i, (acc,) in pl.range(n, init_values=(x,))")
        return target.id, None
    if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name) \
            and isinstance(target.elts[1], (ast.Tuple, ast.List, ast.Name)):
        inner = target.elts[1]
        elts = inner.elts if isinstance(inner, (ast.Tuple, ast.List)) else [inner]
        if not all(isinstance(e, ast.Name) for e in elts):
            raise ParserSyntaxError("carried values must be plain names", span)
        if not has_inits:
            raise ParserSyntaxError("the loop unpacks carried values but has no init_values=", span,
                                    hint="add init_values=(...) to the iterator call")
        return target.elts[0].id, [e.id for e in elts]
    raise ParserSyntaxError("the loop target must be `i` or `i, (a, b, ...)`", span)


def _bind_iter_args(ctx, names, inits, span) -> list:
    iter_args = []
    for name, init in zip(names, inits):
        ia = IterArg(name, init.type, init, span)
        ctx.carry_storage(init, ia)
        ctx.bind(name, ia, span)
        iter_args.append(ia)
    return iter_args


def _parse_loop_body(ctx, body: list, kind: str, span) -> YieldFrame:
    frame = YieldFrame(kind)
    ctx.frames.append(frame)
    ctx.control_depth += 1
    ctx.push_block()
    try:
        parse_body(ctx, body)
    finally:
        ctx.control_depth -= 1
        ctx.frames.pop()
    frame.body = ctx.pop_block(span)
    return frame


def _return_vars(ctx, frame: YieldFrame, iter_args: list, span, what: str) -> list:
    if not iter_args:
        if frame.values:
            raise ParserSyntaxError(f"pl.yield_ in a {what} without init_values", frame.spans[0],
                                    hint="add init_values=(...) to carry values through the loop")
        return []
    if not frame.values:
        raise ParserSyntaxError(f"a {what} with init_values must end with pl.yield_(...)", span,
                                hint="yield the next value of every carried variable")
    for vals, vspan in zip(frame.values, frame.spans):
        if len(vals) != len(iter_args):
            raise ParserTypeError(f"pl.yield_ gives {len(vals)} value(s) but the {what} carries {len(iter_args)}", vspan)
    names = frame.targets or [f"{ia.name_hint}_rv" for ia in iter_args]
    rvs = []
    for name, ia in zip(names, iter_args):
        rv = Var(name, ia.type, span)
        ctx.carry_storage(ia, rv)
        if frame.targets:
            ctx.bind(name, rv, span)
        rvs.append(rv)
    return rvs


def _parse_while_iter(ctx, node: ast.For):
    span = ctx.span(node)
    args, kwargs = eval_call_parts(ctx, node.iter)
    if args or set(kwargs) - {"init_values"}:
        raise ParserSyntaxError("pl.while_ takes only init_values=(...)", span)
    inits = _init_values(kwargs, span)
    if not inits:
        raise ParserSyntaxError("while_() requires init_values to be specified", span,
                                hint="for a loop without carried values write `while cond:`")
    target = node.target
    elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
    if not all(isinstance(e, ast.Name) for e in elts) or len(elts) != len(inits):
        raise ParserSyntaxError(f"pl.while_ unpacks its {len(inits)} carried value(s): for (a, b) in pl.while_(...)",
                                span)
    iter_args = _bind_iter_args(ctx, [e.id for e in elts], inits, span)
    body = list(node.body)
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
            and eval_expr(ctx, first.value.func) is scopes.cond):
        raise ParserSyntaxError("the first statement of a pl.while_ body must be pl.cond(condition)", span)
    if len(first.value.args) != 1:
        raise ParserSyntaxError("pl.cond takes one condition", ctx.span(first))
    cond = _condition(ctx, first.value.args[0])
    frame = _parse_loop_body(ctx, body[1:], "while", span)
    return_vars = _return_vars(ctx, frame, iter_args, span, "while loop")
    ctx.emit(WhileStmt(cond, iter_args, frame.body, return_vars, span))


@statement(ast.While)
def parse_while(ctx, node: ast.While):
    span = ctx.span(node)
    if node.orelse:
        raise UnsupportedFeatureError("while ... else is not supported", span)
    cond = _condition(ctx, node.test)
    frame = _parse_loop_body(ctx, node.body, "while", span)
    if frame.values:
        raise ParserSyntaxError("pl.yield_ in a plain while loop", frame.spans[0],
                                hint="carry values with `for (a,) in pl.while_(init_values=(a0,)):`")
    ctx.emit(WhileStmt(cond, (), frame.body, (), span))


def _condition(ctx, node) -> Expr:
    c = eval_expr(ctx, node)
    if not isinstance(c, Expr):
        if isinstance(c, (bool, int)):
            return to_expr(bool(c), ctx.span(node))
        raise ParserTypeError(f"a condition must be a boolean scalar, got {describe_value(c)}", ctx.span(node))
    if not is_scalar_expr(c):
        raise ParserTypeError(f"a condition must be a scalar, got {describe_value(c)}", ctx.span(node))
    return c


@statement(ast.If)
def parse_if(ctx, node: ast.If):
    span = ctx.span(node)
    test = eval_expr(ctx, node.test)
    if not isinstance(test, Expr):  # compile-time condition: keep only the taken branch
        parse_body(ctx, node.body if test else node.orelse)
        return
    cond = _condition(ctx, node.test) if not is_scalar_expr(test) else test
    frame = YieldFrame("if")
    ctx.frames.append(frame)
    ctx.control_depth += 1
    names_before = dict(ctx.names)
    try:
        ctx.push_block()
        parse_body(ctx, node.body)
        then_body = ctx.pop_block(span)
        then_yields = len(frame.values)
        else_body = None
        if node.orelse:
            then_locals = _hide_branch_locals(ctx, names_before) if then_yields else {}
            ctx.push_block()
            parse_body(ctx, node.orelse)
            for name, var in then_locals.items():
                ctx.names.setdefault(name, var)
            if then_yields and len(frame.values) == then_yields and _is_elif(node):
                _forward_elif_phis(ctx, frame, span)
            else_body = ctx.pop_block(span)
    finally:
        ctx.control_depth -= 1
        ctx.frames.pop()
    return_vars = []
    if frame.values:
        if then_yields == 0 or len(frame.values) == then_yields or else_body is None:
            raise ParserSyntaxError("an if that yields values must pl.yield_ in both branches", span,
                                    hint="add an else branch that yields the same number of values")
        then_vals, else_vals = frame.values[0], frame.values[-1]
        if len(then_vals) != len(else_vals):
            raise ParserTypeError(f"the branches yield {len(then_vals)} and {len(else_vals)} values", span)
        names = frame.targets or [f"phi_{i}" for i in range(len(then_vals))]
        for name, v in zip(names, then_vals):
            rv = Var(name, v.type, span)
            if frame.targets:
                ctx.bind(name, rv, span)
            return_vars.append(rv)
    ctx.emit(IfStmt(cond, then_body, else_body, return_vars, span))


def _hide_branch_locals(ctx, names_before: dict) -> dict:
    """In an if that yields, names first bound in the then branch are that branch's own: the else
    branch binds its own Vars for them (the parse stays SSA). Returns the hidden ones, which stay
    visible after the if where the else branch did not bind the name."""
    hidden = {n: v for n, v in ctx.names.items() if isinstance(v, Var) and n not in names_before}
    for n in hidden:
        del ctx.names[n]
    return hidden


def _is_elif(node: ast.If) -> bool:
    return len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)


def _forward_elif_phis(ctx, frame: YieldFrame, span) -> None:
    """`elif` chains: the inner if bound the yield targets; the outer else branch yields them on."""
    names = frame.targets or []
    values = [ctx.names.get(n) for n in names]
    if names and all(isinstance(v, Var) for v in values):
        frame.values.append(values)
        frame.spans.append(span)
        ctx.emit(YieldStmt(values, span))


def _parse_split_aiv(ctx, node: ast.For):
    span = ctx.span(node)
    args, kwargs = eval_call_parts(ctx, node.iter)
    if set(kwargs) - {"mode", "name_hint"} or len(args) > 2:
        raise ParserSyntaxError("pl.split_aiv takes (count, mode=pl.SplitMode.X, name_hint='')", span)
    count = args[0] if args else 2
    mode = args[1] if len(args) > 1 else kwargs.get("mode")
    if not isinstance(mode, SplitMode):
        raise ParserSyntaxError("pl.split_aiv needs mode=pl.SplitMode.UP_DOWN / LEFT_RIGHT / NONE", span)
    if not isinstance(count, int) or count != 2:
        raise ParserTypeError(f"pl.split_aiv supports exactly 2 lanes, got {count!r}", span)
    if not isinstance(node.target, ast.Name):
        raise ParserSyntaxError("pl.split_aiv binds one lane index: for lane in pl.split_aiv(...)", span)
    lane = Var(node.target.id, ScalarType(INDEX), ctx.span(node.target))
    ctx.bind(lane.name_hint, lane, lane.span)
    ctx.mark_region_var(lane)
    ctx.push_block()
    ctx.split_modes.append(mode)          # pl.aiv_shard / pl.aic_gather on a Tensor read it
    try:
        parse_body(ctx, node.body)
    finally:
        ctx.split_modes.pop()
    body = ctx.pop_block(span)
    ctx.emit(SplitAivScopeStmt(lane, body, mode, count, kwargs.get("name_hint", ""), span))


def _parse_spmd_for(ctx, node: ast.For):
    """`for i in pl.spmd(n): body` → `with pl.spmd(n): i = pl.tile.get_block_idx(); body`."""
    from pypto.ir.stmt import AssignStmt
    from pypto.language.parser.op_bridge import build_call
    from pypto.language.parser.with_scopes import spmd_scope
    span = ctx.span(node)
    if not isinstance(node.target, ast.Name):
        raise ParserSyntaxError("pl.spmd binds one block index: for i in pl.spmd(n)", span)
    from pypto.language.parser import task_graph
    call, pred_node = task_graph.split_predicate(node.iter)
    args, kwargs = eval_call_parts(ctx, call)
    if "deps" in kwargs:
        raise ParserSyntaxError("pl.spmd() does not accept 'deps=' here", span,
                                hint="bind the region with `with pl.spmd(n, deps=[...]) as tid:`")
    task_graph.emit_options(ctx, span, **task_graph.scope_options(ctx, kwargs, pred_node, span, what="pl.spmd"))
    ctx.push_block()
    block_idx = build_call("tile.get_block_idx", [], {}, span)
    idx = Var(node.target.id, block_idx.type, ctx.span(node.target))
    ctx.bind(idx.name_hint, idx, idx.span)
    ctx.mark_region_var(idx)
    ctx.emit(AssignStmt(idx, block_idx, span))
    parse_body(ctx, node.body)
    body = ctx.pop_block(span)
    ctx.emit(spmd_scope(body, args, kwargs, span))
