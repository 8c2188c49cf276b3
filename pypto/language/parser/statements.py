"""Straight-line statements: assignments (plain, annotated, augmented, tuple-unpacking,
subscript sugar), expression statements, `pl.yield_`, return, pass / break / continue.

Annotations set both the Var's type and the Call's type (after a compatibility check), so
printed IR — where every assignment is annotated with memrefs and views — reads back exactly.
"""

from __future__ import annotations

import ast
import warnings

from pypto.errors import PyptoWarning
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, Expr, TupleGetItem, Var, const
from pypto.ir.ops.common import describe, dims_equal
from pypto.ir.visitor import collect
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ReturnStmt, YieldStmt
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType, Type, UnknownType, static_dims
from pypto.language import scopes
from pypto.language.parser.annotations import eval_annotation
from pypto.language.parser.diagnostics import (InvalidOperationError, ParserSyntaxError, ParserTypeError,
                                               UnsupportedFeatureError)
from pypto.language.parser.dispatch import eval_expr, statement
from pypto.language.parser.dump_tags import parse_dump_tag
from pypto.language.parser.expressions import binary
from pypto.language.parser.op_bridge import build_call
from pypto.language.parser.subscripts import assign_subscript
from pypto.language.parser.values import describe_value, is_python_number, to_expr


def _callee_of(ctx, value_node):
    """The object a call statement calls, without evaluating its arguments (None when not a call)."""
    if not isinstance(value_node, ast.Call):
        return None
    try:
        return eval_expr(ctx, value_node.func)
    except Exception:  # noqa: BLE001 - the full evaluation will report it with its span
        return None


@statement(ast.Assign)
def parse_assign(ctx, node: ast.Assign):
    span = ctx.span(node)
    if len(node.targets) != 1:
        raise UnsupportedFeatureError("chained assignment (a = b = ...) is not supported", span,
                                      hint="assign each name separately")
    target = node.targets[0]
    callee = _callee_of(ctx, node.value)
    if callee is scopes.yield_:
        return parse_yield(ctx, node.value, target)
    if callee is scopes.cond:
        raise InvalidOperationError("pl.cond(...) must be the first statement of a pl.while_ body", span)
    if callee is scopes.submit or callee is scopes.spmd_submit:
        from pypto.language.parser.task_graph import parse_submit_assign
        return parse_submit_assign(ctx, target, node.value, span)
    value = eval_expr(ctx, node.value)
    assign_target(ctx, target, value, span)


def assign_target(ctx, target, value, span) -> None:
    if isinstance(target, ast.Name):
        assign_name(ctx, target.id, value, span)
    elif isinstance(target, (ast.Tuple, ast.List)):
        unpack(ctx, target, value, span)
    elif isinstance(target, ast.Subscript):
        assign_subscript(ctx, target, value, span)
    else:
        raise UnsupportedFeatureError(f"cannot assign to a {type(target).__name__}", span,
                                      hint="assign to a name, a tuple of names, or a tensor / tile subscript")


def assign_name(ctx, name: str, value, span, annotation: Type | None = None) -> None:
    """Bind `name` to `value`: IR values get an AssignStmt; compile-time values stay Python."""
    if not isinstance(value, Expr) and annotation is None:
        current = ctx.names.get(name)
        if not (is_python_number(value) and (isinstance(current, Var) or ctx.control_depth > 0)):
            ctx.bind(name, value, span)
            return
    if not isinstance(value, Expr):
        value = _literal(value, annotation, span)
    if annotation is not None:
        value = _apply_annotation(name, value, annotation, span)
    if annotation is None:
        value = _write_through(ctx, name, value, span)
    if isinstance(value.type, UnknownType) and annotation is None:
        raise ParserTypeError(f"'{name}' is assigned a value that has no result", span,
                              hint="call side-effect-only ops as statements, without assignment")
    var_type = value.type if annotation is None or isinstance(value, Call) else _fill_gaps(annotation, value.type)
    var = ctx.assign_var(name, var_type, span)
    ctx.emit(AssignStmt(var, value, span))


def _write_through(ctx, name: str, value: Expr, span) -> Expr:
    """`out = expr` on an Out / InOut parameter writes the whole buffer: `out = pl.assemble(out, expr, [0, ...])`.

    Plain rebinding would silently drop the write. Left alone: values that mention the
    parameter or a Var holding its buffer (the user threads it: `out = pl.store(t, offs, out)`, or a
    loop carry started from it: `data = pld.tensor.allreduce(staged, ...)`), fresh allocations, and
    the annotated form (the printer's, which must read back unchanged).
    """
    param = ctx.names.get(name)
    if not isinstance(param, Var):            # a compile-time value (a dict, a list, ...) bound to the name
        return value
    if param in ctx.input_params:
        _warn_rebound_input(ctx, param, value, span)
    if param not in ctx.written_params or not isinstance(value.type, (TensorType, TileType)):
        return value
    root = ctx.storage_root(param)
    if type(value.type) is not type(param.type) or \
            collect(value, lambda n: n is param or isinstance(n, Var) and ctx.storage_root(n) is root):
        return value                          # (a loop carry started from the parameter is its buffer too)
    if isinstance(value, Call) and value.op.name in ("tensor.create", "tile.create"):
        return value
    if ctx.func_type in (FunctionType.AIC, FunctionType.AIV) and isinstance(value.type, TensorType):
        raise ParserTypeError(f"`{name} = ...` on the Out parameter '{name}' of a hand-written "
                              f"{ctx.func_type.name} kernel would copy another tensor into it, a tensor op such "
                              f"kernels do not have", span,
                              hint=f"store the tile into '{name}' itself: {name} = pl.store(tile, offsets, {name})")
    zeros = to_expr([0] * len(param.type.shape), span)
    return build_call("assemble", [param, value, zeros], {}, span)


def _warn_rebound_input(ctx, param, value: Expr, span) -> None:
    """`out = expr` on an input parameter only re-binds the name: a caller expecting its array to be
    written gets it back untouched. Warn once per parameter (the author may mean it, e.g. a returned
    value), unless the value reads the parameter (`x = pl.add(x, 1)` is an ordinary update)."""
    ctx.input_params.discard(param)
    if not isinstance(value.type, (TensorType, TileType)) or collect(value, lambda n: n is param):
        return
    warnings.warn_explicit(
        f"'{param.name_hint}' is an input parameter, so `{param.name_hint} = ...` re-binds the name and the "
        f"caller's array is not written; mark the parameter pl.Out[...] (or pl.InOut[...]) to write into it",
        PyptoWarning, span.filename or "<pypto>", span.line or 0)


def _literal(value, annotation, span) -> Expr:
    if not (is_python_number(value) or isinstance(value, bool)):
        raise ParserTypeError(f"cannot assign {describe_value(value)} to a typed variable", span)
    dtype = annotation.dtype if isinstance(annotation, ScalarType) else None
    if dtype is not None and isinstance(value, float) and not dtype.is_float():
        raise ParserTypeError(f"cannot initialize a scalar of dtype {dtype.name} with the float {value!r}", span)
    return const(value, dtype, span)


def _apply_annotation(name: str, value: Expr, ann: Type, span) -> Expr:
    """Check that the value fits the annotation, then give a call the annotated type."""
    vt = value.type
    if isinstance(vt, UnknownType) and getattr(getattr(value, "op", None), "result_from_annotation", False):
        return value.replace(type=ann)      # e.g. a tpop: the popped tile's type is the annotation
    if isinstance(ann, (TensorType, TileType)):
        if not isinstance(vt, (TensorType, TileType)) or isinstance(vt, TileType) != isinstance(ann, TileType):
            raise ParserTypeError(f"'{name}' is annotated {describe(ann)} but the value is {describe(vt)}", span)
        if vt.dtype is not ann.dtype:
            raise ParserTypeError(f"'{name}' is annotated with dtype {ann.dtype.name} but the value has dtype "
                                  f"{vt.dtype.name}", span, hint=f"cast explicitly: pl.cast(x, pl.{ann.dtype.name})")
        if not dims_equal(vt.shape, ann.shape):
            raise ParserTypeError(f"'{name}' is annotated {describe(ann)} but the value is {describe(vt)}", span)
    elif isinstance(ann, ScalarType):
        if not isinstance(vt, ScalarType):
            raise ParserTypeError(f"'{name}' is annotated {describe(ann)} but the value is {describe(vt)}", span)
    elif isinstance(ann, TupleType):
        if not isinstance(vt, TupleType) or len(vt.types) != len(ann.types):
            raise ParserTypeError(f"'{name}' is annotated as a {len(ann.types)}-tuple but the value is "
                                  f"{describe(vt)}", span)
    if isinstance(value, Call):
        return value.replace(type=_fill_gaps(ann, vt))
    return value


def _fill_gaps(ann: Type, vt: Type) -> Type:
    """An annotation states what it names and leaves the memory space and a static valid region to
    deduction: `pl.Tile[[64], pl.FP32]` on a Vec load is a Vec tile, and a view-less annotation of a
    value whose valid region is a narrower compile-time rectangle keeps that region (the layout being the
    space's implicit one, as the annotation says), as the reference merges them. Layouts, MemRefs and
    runtime valid regions are not filled: the printer writes them whenever a Var has them, and a pass may
    give a Var another one than its value deduces (SplitVectorKernel types a lane's tile by its full
    share while its load reads the rows left at run time); a full region cannot be spelled in an
    annotation to stop the fill."""
    if not (isinstance(ann, TileType) and isinstance(vt, TileType)):
        return ann
    space = ann.memory_space if ann.memory_space is not None else vt.memory_space
    filled = TileType(ann.shape, ann.dtype, memref=ann.memref, tile_view=ann.tile_view, memory_space=space)
    if ann.tile_view is None and space is vt.memory_space and vt.tile_view is not None and vt.tile_view.valid_shape \
            and static_dims(vt.tile_view.valid_shape) is not None:
        return filled.with_valid_shape(vt.valid_shape)     # the space's own layout, the deduced valid region
    return filled


def unpack(ctx, target, value, span) -> None:
    names = target.elts
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ParserTypeError(f"cannot unpack {len(value)} values into {len(names)} names", span)
        for t, v in zip(names, value):
            assign_target(ctx, t, v, span)
        return
    if isinstance(value, Call) and not isinstance(value.type, TupleType):
        count = 0 if isinstance(value.type, UnknownType) else 1
        raise ParserTypeError(f"unpacks {len(names)} result value(s) but '{value.op.name}' returns {count}", span)
    if not isinstance(value, Expr) or not isinstance(value.type, TupleType):
        raise ParserTypeError(f"cannot unpack {describe_value(value)}", span,
                              hint="only multi-result calls and tuples can be unpacked")
    count = len(value.type.types)
    if count != len(names):
        what = f"'{value.op.name}'" if isinstance(value, Call) else "the value"
        raise ParserTypeError(f"unpacks {len(names)} value(s) but {what} returns {count}", span)
    if isinstance(value, Var):
        holder = value
    else:
        holder = Var("ret", value.type, span)
        ctx.emit(AssignStmt(holder, value, span))
    for i, t in enumerate(names):
        assign_target(ctx, t, TupleGetItem(holder, i, span), span)


@statement(ast.AnnAssign)
def parse_ann_assign(ctx, node: ast.AnnAssign):
    span = ctx.span(node)
    if node.value is None:
        raise ParserSyntaxError("a declaration without a value is not supported", span,
                                hint="write name: Type = value")
    if not isinstance(node.target, ast.Name):
        raise ParserSyntaxError("only a plain name can be annotated", span)
    ann, _ = eval_annotation(ctx, node.annotation)
    if _callee_of(ctx, node.value) is scopes.yield_:   # `x_out: T = pl.yield_(x)`: the type is the carried one
        return parse_yield(ctx, node.value, node.target)
    value = eval_expr(ctx, node.value)
    assign_name(ctx, node.target.id, value, span, annotation=ann)


@statement(ast.AugAssign)
def parse_aug_assign(ctx, node: ast.AugAssign):
    span = ctx.span(node)
    if not isinstance(node.target, ast.Name):
        raise UnsupportedFeatureError("augmented assignment needs a plain name (x += ...)", span)
    current = ctx.lookup(node.target.id, node.target)
    value = binary(ctx, node, type(node.op), current, eval_expr(ctx, node.value))
    assign_name(ctx, node.target.id, value, span)


@statement(ast.Expr)
def parse_expr_stmt(ctx, node: ast.Expr):
    span = ctx.span(node)
    if isinstance(node.value, ast.Constant) and not isinstance(node.value.value, (int, float)):
        return  # docstrings
    callee = _callee_of(ctx, node.value)
    if callee is scopes.yield_:
        return parse_yield(ctx, node.value, None)
    if callee is scopes.func_attr:
        return parse_func_attr(ctx, node.value)
    if callee is scopes.dump_tag:
        return parse_dump_tag(ctx, node.value)
    if callee is scopes.cond:
        raise InvalidOperationError("pl.cond(...) must be the first statement of a pl.while_ body", span)
    if callee is print:
        return
    value = eval_expr(ctx, node.value)
    if isinstance(value, Expr):
        ctx.emit(EvalStmt(value, span))


def parse_func_attr(ctx, call: ast.Call):
    span = ctx.span(call)
    if len(call.args) != 1 or call.keywords:
        raise ParserSyntaxError("pl.func_attr takes one dict: pl.func_attr({'key': value})", span)
    if not isinstance(call.args[0], ast.Dict):
        raise ParserSyntaxError("pl.func_attr needs a dict literal", span)
    keys = [k.value for k in call.args[0].keys if isinstance(k, ast.Constant)]
    dup = {k for k in keys if keys.count(k) > 1} | {k for k in keys if k in ctx.func_attrs}
    if dup:
        raise ParserSyntaxError(f"duplicate function attribute key {sorted(dup)[0]!r}", span)
    ctx.func_attrs.update(eval_expr(ctx, call.args[0]))


def parse_yield(ctx, call: ast.Call, target) -> None:
    span = ctx.span(call)
    if not ctx.frames:
        raise InvalidOperationError("pl.yield_ outside a loop or if", span,
                                    hint="pl.yield_ ends the body of a for / while / if that carries values")
    if call.keywords:
        raise ParserSyntaxError("pl.yield_ takes positional values only", span)
    values = [to_expr(eval_expr(ctx, a), span, "yielded value") for a in call.args]
    names = None
    if target is not None:
        elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(e, ast.Name) for e in elts):
            raise ParserSyntaxError("pl.yield_ results must be bound to plain names", span)
        names = [e.id for e in elts]
        if len(names) != len(values):
            raise ParserTypeError(f"pl.yield_ gives {len(values)} value(s) but {len(names)} name(s) receive them", span)
    # a yielded op call gets its own binding first: later passes give tiles memory where they are assigned
    values = [_bind_yielded_call(ctx, v, names[i] if names else f"yield_{i}", span) for i, v in enumerate(values)]
    frame = ctx.frames[-1]
    if names is not None and frame.targets is None:
        frame.targets = names
    frame.values.append(values)
    frame.spans.append(span)
    ctx.emit(YieldStmt(values, span))


def _bind_yielded_call(ctx, value: Expr, name: str, span) -> Expr:
    if not isinstance(value, Call) or not isinstance(value.type, (TensorType, TileType)):
        return value
    var = Var(name, value.type, span)
    ctx.emit(AssignStmt(var, value, span))
    return var


@statement(ast.Return)
def parse_return(ctx, node: ast.Return):
    span = ctx.span(node)
    if node.value is None:
        values = []
    else:
        v = eval_expr(ctx, node.value)
        values = list(v) if isinstance(v, tuple) else [v]
    if getattr(ctx, "inline_result", None) is not None:
        ctx.inline_result.append(values)
        return
    exprs = [to_expr(v, span, "return value") for v in values]
    declared = ctx.return_types
    if len(exprs) == 1 and isinstance(exprs[0].type, TupleType) and declared is not None and len(declared) > 1 \
            and len(exprs[0].type.types) == len(declared):
        exprs = _unpacked_return(ctx, exprs[0], span)      # `return self.f(...)` of a multi-result call
    _check_returns(ctx, exprs, span)
    ctx.emit(ReturnStmt(exprs, span))


def _unpacked_return(ctx, value: Expr, span) -> list:
    """The elements of a multi-result value, each bound to a name of its own, to return them one by one."""
    holder = value
    if not isinstance(value, Var):
        holder = Var("ret", value.type, span)
        ctx.emit(AssignStmt(holder, value, span))
    out = []
    for i, t in enumerate(value.type.types):
        var = Var(f"ret_{i}", t, span)
        ctx.emit(AssignStmt(var, TupleGetItem(holder, i, span), span))
        out.append(var)
    return out


def _check_returns(ctx, exprs: list, span) -> None:
    declared = ctx.return_types
    if declared is None:
        return
    if len(exprs) != len(declared):
        raise ParserTypeError(f"return gives {len(exprs)} value(s) but '{ctx.func_name}' declares {len(declared)}",
                              span, hint="make the return statement match the -> annotation")
    for i, (e, t) in enumerate(zip(exprs, declared)):
        et = e.type
        same_kind = isinstance(et, type(t)) or isinstance(t, type(et))
        if not same_kind or getattr(et, "dtype", None) is not getattr(t, "dtype", None) and not isinstance(t, ScalarType):
            raise ParserTypeError(f"return value {i} is {describe(et)} but '{ctx.func_name}' declares {describe(t)}",
                                  span)


@statement(ast.Pass)
def parse_pass(ctx, node):
    return None


@statement(ast.Break, ast.Continue)
def parse_break_continue(ctx, node):
    span = ctx.span(node)
    if not any(f.kind in ("for", "while") for f in ctx.frames):
        word = "break" if isinstance(node, ast.Break) else "continue"
        raise ParserSyntaxError(f"'{word}' outside a loop", span)
    ctx.emit(BreakStmt(span) if isinstance(node, ast.Break) else ContinueStmt(span))


@statement(ast.Assert)
def parse_assert(ctx, node: ast.Assert):
    """Asserts do nothing in a kernel body (as in the reference); pl.static_assert checks at parse time."""
    return None
