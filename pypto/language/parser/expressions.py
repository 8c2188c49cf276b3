"""Expressions: names, constants, operators, comparisons, attributes, lists / tuples / dicts.

Operators fold when both sides are compile-time Python values; on scalars they build
`BinaryExpr` / `UnaryExpr`; on tensors and tiles they become op calls (`a + b` →
`pl.add(a, b)`, dispatched by the op layer to tensor.add / tile.add / tile.adds ...).
"""

from __future__ import annotations

import ast
import enum
import operator

from pypto.ir.enums import CmpType
from pypto.ir.expr import BinaryExpr, Expr, UnaryExpr
from pypto.ir.types import TensorType, TileType
from pypto.language.parser.diagnostics import (InvalidOperationError, ParserTypeError, UnsupportedFeatureError,
                                               did_you_mean)
from pypto.language.parser.dispatch import eval_expr, expression
from pypto.language.parser.op_bridge import build_call
from pypto.language.parser.values import (MethodRef, SelfRef, describe_value, is_python_number, is_shaped_expr,
                                          to_expr)

# Python operator → (scalar BinaryExpr op, tensor/tile DSL op, Python fold function)
_BINOPS = {
    ast.Add: ("add", "add", operator.add), ast.Sub: ("sub", "sub", operator.sub),
    ast.Mult: ("mul", "mul", operator.mul), ast.Div: ("truediv", "div", operator.truediv),
    ast.FloorDiv: ("floordiv", None, operator.floordiv), ast.Mod: ("floormod", "rem", operator.mod),
    ast.Pow: ("pow", None, operator.pow), ast.BitAnd: ("bitand", "and_", operator.and_),
    ast.BitOr: ("bitor", "or_", operator.or_), ast.BitXor: ("bitxor", "xor", operator.xor),
    ast.LShift: ("shl", "shl", operator.lshift), ast.RShift: ("shr", "shr", operator.rshift),
    ast.MatMult: (None, "matmul", operator.matmul),
}
_CMPOPS = {
    ast.Eq: ("eq", CmpType.EQ, operator.eq), ast.NotEq: ("ne", CmpType.NE, operator.ne),
    ast.Lt: ("lt", CmpType.LT, operator.lt), ast.LtE: ("le", CmpType.LE, operator.le),
    ast.Gt: ("gt", CmpType.GT, operator.gt), ast.GtE: ("ge", CmpType.GE, operator.ge),
}
class _NoOp:
    """`a.bind_dynamic(0, M)`: a parse-time declaration for @pl.jit, nothing to emit."""

    def __repr__(self) -> str:
        return "<no-op>"


NO_OP = _NoOp()
_COMMUTATIVE = {"add", "mul", "maximum", "minimum", "and_", "or_", "xor"}


@expression(ast.Constant)
def parse_constant(ctx, node: ast.Constant):
    return node.value


@expression(ast.Name)
def parse_name(ctx, node: ast.Name):
    if node.id == "self" and ctx.env.in_program and "self" not in ctx.names:
        return SelfRef()
    return ctx.lookup(node.id, node)


@expression(ast.List, ast.Tuple)
def parse_sequence(ctx, node):
    items = []
    for elt in node.elts:
        if isinstance(elt, ast.Starred):
            inner = eval_expr(ctx, elt.value)
            if not isinstance(inner, (list, tuple)):
                raise ParserTypeError(f"cannot unpack {describe_value(inner)} with *", ctx.span(elt))
            items.extend(inner)
        else:
            items.append(eval_expr(ctx, elt))
    return items if isinstance(node, ast.List) else tuple(items)


@expression(ast.Dict)
def parse_dict(ctx, node: ast.Dict):
    out = {}
    for k, v in zip(node.keys, node.values):
        if k is None:
            out.update(eval_expr(ctx, v))
            continue
        key = eval_expr(ctx, k)
        if isinstance(key, Expr):
            raise ParserTypeError("dictionary keys must be compile-time constants", ctx.span(k))
        out[key] = eval_expr(ctx, v)
    return out


@expression(ast.JoinedStr)
def parse_fstring(ctx, node: ast.JoinedStr):
    parts = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        else:
            val = eval_expr(ctx, v.value)
            spec = eval_expr(ctx, v.format_spec) if v.format_spec is not None else ""
            parts.append(format(val, spec) if not isinstance(val, Expr) else repr(val))
    return "".join(parts)


@expression(ast.IfExp)
def parse_ifexp(ctx, node: ast.IfExp):
    test = eval_expr(ctx, node.test)
    if isinstance(test, Expr):
        raise InvalidOperationError("a conditional expression needs a compile-time condition",
                                    ctx.span(node), hint="use an if statement with pl.yield_ for runtime conditions")
    return eval_expr(ctx, node.body if test else node.orelse)


@expression(ast.Attribute)
def parse_attribute(ctx, node: ast.Attribute):
    base = eval_expr(ctx, node.value)
    name = node.attr
    if isinstance(base, SelfRef):
        if name not in ctx.env.signatures:
            raise InvalidOperationError(f"the program has no function '{name}'", ctx.span(node),
                                        hint=did_you_mean(name, ctx.env.signatures))
        return MethodRef(name)
    if isinstance(base, Expr):
        return _expr_attribute(ctx, node, base, name)
    try:
        return getattr(base, name)
    except AttributeError:
        pass
    from pypto.language.scopes import OpNamespace
    if isinstance(base, OpNamespace):
        from pypto.language.parser.op_bridge import dsl_op_paths
        prefix = base._prefix
        names = [p.split(".", 1)[1] for p in dsl_op_paths() if p.startswith(prefix + ".")]
        raise InvalidOperationError(f"Unknown op 'pl.{prefix}.{name}'", ctx.span(node),
                                    hint=did_you_mean(name, names) or f"see dir(pl.{prefix}) for the {prefix} ops")
    owner = getattr(base, "__name__", None) or type(base).__name__
    if owner == "pypto.language.distributed":
        raise UnsupportedFeatureError(f"pld.{name} is not supported yet", ctx.span(node),
                                      hint="the distributed namespace only provides pld.DistributedTensor annotations")
    if owner == "pypto.language":
        short = "pl"
        from pypto.language.parser.op_bridge import dsl_op_paths
        names = [n for n in dir(base) if not n.startswith("_")] + dsl_op_paths()
        raise InvalidOperationError(f"Unknown tensor operation or name '{short}.{name}'", ctx.span(node),
                                    hint=did_you_mean(name, names) or "see the op catalog of pypto.language")
    raise InvalidOperationError(f"{owner} has no attribute '{name}'", ctx.span(node),
                                hint=did_you_mean(name, [n for n in dir(base) if not n.startswith("_")]))


def _expr_attribute(ctx, node, base: Expr, name: str):
    t = base.type
    if isinstance(t, (TensorType, TileType)):
        if name == "shape":
            return [d.value if hasattr(d, "value") and isinstance(getattr(d, "value"), int) else d for d in t.shape]
        if name == "dtype":
            return t.dtype
        if name == "ndim":
            return len(t.shape)
    if name == "bind_dynamic":
        return NO_OP
    if name == "dtype" and hasattr(t, "dtype"):
        return t.dtype
    raise InvalidOperationError(f"{describe_value(base)} has no attribute '{name}'", ctx.span(node),
                                hint="tensors and tiles expose .shape, .dtype and .ndim at parse time")


@expression(ast.BinOp)
def parse_binop(ctx, node: ast.BinOp):
    lhs, rhs = eval_expr(ctx, node.left), eval_expr(ctx, node.right)
    return binary(ctx, node, type(node.op), lhs, rhs)


def binary(ctx, node, op_type, lhs, rhs):
    scalar_op, dsl_op, fold = _BINOPS[op_type]
    span = ctx.span(node)
    if not isinstance(lhs, Expr) and not isinstance(rhs, Expr):
        try:
            return fold(lhs, rhs)
        except ZeroDivisionError:
            raise ParserTypeError("division by zero in a compile-time expression", span) from None
        except TypeError as e:
            raise ParserTypeError(f"cannot apply {op_type.__name__} to {describe_value(lhs)} and "
                                  f"{describe_value(rhs)}: {e}", span) from None
    if is_shaped_expr(lhs) or is_shaped_expr(rhs):
        if dsl_op is None:
            raise InvalidOperationError(f"operator {op_type.__name__} is not defined on tensors or tiles", span)
        if not is_shaped_expr(lhs):
            if dsl_op not in _COMMUTATIVE:
                raise InvalidOperationError(f"a scalar on the left of '{op_type.__name__}' with a tensor or tile "
                                            "on the right is not supported", span,
                                            hint="reorder the operands or broadcast the scalar with pl.expands")
            lhs, rhs = rhs, lhs
        return build_call(dsl_op, [lhs, to_expr(rhs, span)], {}, span)
    if scalar_op is None:
        raise InvalidOperationError(f"operator {op_type.__name__} needs tensors or tiles", span)
    _check_scalar_operand(ctx, node, lhs)
    _check_scalar_operand(ctx, node, rhs)
    return BinaryExpr(scalar_op, to_expr(lhs, span), to_expr(rhs, span), span=span)


def _check_scalar_operand(ctx, node, v) -> None:
    if not (isinstance(v, Expr) or is_python_number(v) or isinstance(v, bool)):
        raise ParserTypeError(f"arithmetic needs numbers or scalars, got {describe_value(v)}", ctx.span(node))
    if isinstance(v, Expr) and not hasattr(v.type, "dtype"):
        raise ParserTypeError(f"arithmetic needs numbers or scalars, got {describe_value(v)}", ctx.span(node))


@expression(ast.UnaryOp)
def parse_unaryop(ctx, node: ast.UnaryOp):
    v = eval_expr(ctx, node.operand)
    span = ctx.span(node)
    op = type(node.op)
    if not isinstance(v, Expr):
        return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                ast.Invert: operator.invert}[op](v)
    if op is ast.UAdd:
        return v
    if is_shaped_expr(v):
        name = {ast.USub: "neg", ast.Invert: "not_"}.get(op)
        if name is None:
            raise InvalidOperationError("'not' is not defined on tensors or tiles", span)
        return build_call(name, [v], {}, span)
    return UnaryExpr({ast.USub: "neg", ast.Not: "not", ast.Invert: "bitnot"}[op], v, span=span)


@expression(ast.BoolOp)
def parse_boolop(ctx, node: ast.BoolOp):
    name = "and" if isinstance(node.op, ast.And) else "or"
    span = ctx.span(node)
    result = eval_expr(ctx, node.values[0])
    for sub in node.values[1:]:
        if not isinstance(result, Expr):  # compile-time short circuit
            if (name == "and" and not result) or (name == "or" and result):
                return result
            result = eval_expr(ctx, sub)
            continue
        rhs = eval_expr(ctx, sub)
        result = BinaryExpr(name, result, to_expr(rhs, span), span=span)
    return result


@expression(ast.Compare)
def parse_compare(ctx, node: ast.Compare):
    span = ctx.span(node)
    lhs = eval_expr(ctx, node.left)
    result = None
    for op, right in zip(node.ops, node.comparators):
        rhs = eval_expr(ctx, right)
        one = _compare(ctx, node, type(op), lhs, rhs)
        if result is None:
            result = one
        elif isinstance(result, Expr) or isinstance(one, Expr):
            result = BinaryExpr("and", to_expr(result, span), to_expr(one, span), span=span)
        else:
            result = result and one
        lhs = rhs
    return result


def _compare(ctx, node, op_type, lhs, rhs):
    span = ctx.span(node)
    if op_type in (ast.Is, ast.IsNot, ast.In, ast.NotIn):
        if isinstance(lhs, Expr) or isinstance(rhs, Expr):
            raise InvalidOperationError(f"'{op_type.__name__}' works only on compile-time values", span)
        return {ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
                ast.NotIn: lambda a, b: a not in b}[op_type](lhs, rhs)
    scalar_op, cmp_type, fold = _CMPOPS[op_type]
    if not isinstance(lhs, Expr) and not isinstance(rhs, Expr):
        return fold(lhs, rhs)
    if is_shaped_expr(lhs) or is_shaped_expr(rhs):
        return build_call("cmp", [to_expr(lhs, span), to_expr(rhs, span)], {"cmp_type": cmp_type}, span)
    if isinstance(lhs, enum.Enum) or isinstance(rhs, enum.Enum):
        raise ParserTypeError("cannot compare an IR value with an enum", span)
    return BinaryExpr(scalar_op, to_expr(lhs, span), to_expr(rhs, span), span=span)
