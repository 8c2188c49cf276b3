"""Annotations → IR types. Annotations are evaluated like any expression (so symbolic dims,
closure constants and type aliases work); the result is checked to be a type.

    pl.Tensor[[64, M], pl.FP32]       → TensorType
    pl.Out[pl.Tensor[...]]            → (TensorType, ParamDirection.Out)
    tuple[T1, T2]                     → [T1, T2] as a return type, TupleType on a variable
    pl.FP32 / int / float             → ScalarType
"""

from __future__ import annotations

import ast
import builtins
from typing import Optional

from pypto.ir.dtypes import BOOL, FP32, INDEX, DataType
from pypto.ir.enums import ParamDirection
from pypto.ir.types import ScalarType, TupleType, Type
from pypto.language import typing as pl_typing
from pypto.language.parser.diagnostics import ParserSyntaxError, ParserTypeError
from pypto.language.parser.dispatch import eval_expr
from pypto.language.parser.values import Directed, MultiReturn, describe_value

BARE_SHAPED = (pl_typing.Tensor, pl_typing.Tile)


def eval_annotation(ctx, node: ast.expr, *, allow_bare: bool = False, allow_direction: bool = False):
    """(type, direction). A bare `pl.Tensor` / `pl.Tile` gives the class itself when allow_bare."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # from __future__ import annotations
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError as e:
            raise ParserSyntaxError(f"invalid annotation string {node.value!r}: {e.msg}", ctx.span(node)) from None
    value = eval_expr(ctx, node)
    direction = ParamDirection.In
    if isinstance(value, Directed):
        if not allow_direction:
            raise ParserTypeError("pl.Out / pl.InOut are only allowed on function parameters", ctx.span(node))
        direction, value = value.direction, value.type
    if value is pl_typing.Out or value is pl_typing.InOut:
        raise ParserTypeError(f"pl.{value.__name__} needs the parameter type: pl.{value.__name__}[pl.Tensor[[64], pl.FP32]]",
                              ctx.span(node))
    if isinstance(value, MultiReturn) and not allow_direction:
        value = _tuple_type(ctx, node, value)     # `pair: tuple[T1, T2] = self.two(x)`
    t = as_type(value)
    if t is not None:
        return intern_unbound_bases(ctx, t), direction
    if _is_bare(value):
        if allow_bare:
            return value, direction
        raise ParserTypeError(f"incomplete type annotation pl.{value.__name__}: give its shape and dtype",
                              ctx.span(node), hint=f"write pl.{value.__name__}[[64, 64], pl.FP32]")
    raise ParserTypeError(f"invalid type annotation: {describe_value(value)}", ctx.span(node),
                          hint="use pl.Tensor[[...], dtype], pl.Tile[[...], dtype], pl.Scalar[dtype] or pl.Tuple[...]")


def _tuple_type(ctx, node, value: MultiReturn):
    types = [as_type(v) for v in value.types]
    bad = next((v for v, t in zip(value.types, types) if t is None), None)
    if bad is not None or not types:
        raise ParserTypeError(f"invalid tuple element type {describe_value(bad)}", ctx.span(node),
                              hint="tuple[...] annotations list complete types: tuple[pl.Tensor[[64], pl.FP32], ...]")
    return TupleType(types)


def intern_unbound_bases(ctx, t: Type) -> Type:
    """One base Var per name for MemRefs written by name (`pl.MemRef('mem_ddr_0', 0, 256)`, pinned
    `pl.MemRef("ping")`): every annotation of one function naming it reads back as the same base."""
    memref = getattr(t, "memref", None)
    if memref is None or ctx.names.get(memref.base.name_hint) is memref.base:
        return t
    base = ctx.unbound_bases.setdefault(memref.base.name_hint, memref.base)
    return t if base is memref.base else t.replace(memref=memref.replace(base=base))


def as_type(value) -> Optional[Type]:
    if isinstance(value, Type):
        return value
    if isinstance(value, DataType):
        return ScalarType(value)
    if value is builtins.int:
        return ScalarType(INDEX)
    if value is builtins.float:
        return ScalarType(FP32)
    if value is builtins.bool:
        return ScalarType(BOOL)
    if isinstance(value, type):
        return pl_typing.annotation_class_type(value)
    return None


def _is_bare(value) -> bool:
    return isinstance(value, type) and value in BARE_SHAPED


def eval_return_annotation(ctx, node: Optional[ast.expr]) -> Optional[list]:
    """The return types, or None when not annotated (inferred from the return statement)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and node.value is None:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        node = ast.parse(node.value, mode="eval").body
    value = eval_expr(ctx, node)
    if _is_bare(value) or (isinstance(value, MultiReturn) and any(_is_bare(v) for v in value.types)):
        return None   # `-> pl.Tensor` (jit style): the types come from the return statement
    if isinstance(value, MultiReturn):
        types = []
        for v in value.types:
            t = as_type(v)
            if t is None:
                raise ParserTypeError(f"invalid return type {describe_value(v)}", ctx.span(node))
            types.append(t)
        return types
    if isinstance(value, TupleType) and isinstance(node, ast.Subscript):
        return list(value.types)
    t, _ = eval_annotation(ctx, node)
    return [t]
