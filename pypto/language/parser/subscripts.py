"""Subscripts: annotation subscripts (`pl.Tensor[...]`, `pl.Out[...]`, `tuple[...]`), tuple items
(`t[0]` → TupleGetItem), and the tensor / tile sugar:

    A[0:16, :]          → pl.slice(A, [16, N], [0, 0])
    A[i, j]             → pl.read(A, [i, j])
    dst[i:i+16, :] = s  → dst = pl.assemble(dst, s, [i, 0])
    out[:] = expr       → out = pl.assemble(out, expr, [0, ...])
"""

from __future__ import annotations

import ast
import builtins

from pypto.errors import TypeCheckError
from pypto.ir.expr import BinaryExpr, ConstInt, Expr, TupleGetItem
from pypto.ir.stmt import AssignStmt, EvalStmt
from pypto.ir.types import DistributedTensorType, TaskIdArrayType, TensorType, TileType, TupleType, Type
from pypto.language import typing as pl_typing
from pypto.language.parser.affine import constant_difference
from pypto.language.parser.diagnostics import (ParserSyntaxError, ParserTypeError, SSAViolationError,
                                               UnsupportedFeatureError)
from pypto.language.parser.dispatch import eval_expr, expression
from pypto.language.parser.op_bridge import build_call
from pypto.language.parser.values import Directed, MultiReturn, describe_value, is_shaped_expr, to_expr

_TYPE_BUILDERS = {pl_typing.Tensor: pl_typing.tensor_type, pl_typing.Tile: pl_typing.tile_type,
                  pl_typing.Scalar: pl_typing.scalar_type, pl_typing.Tuple: pl_typing.tuple_type,
                  pl_typing.Array: lambda item: pl_typing.Array[item]}


def _index_nodes(node: ast.Subscript) -> list:
    sl = node.slice
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


@expression(ast.Subscript)
def parse_subscript(ctx, node: ast.Subscript):
    base = eval_expr(ctx, node.value)
    span = ctx.span(node)
    builder = _type_builder(base)
    if builder is not None:
        items = [eval_expr(ctx, n) for n in _index_nodes(node)]
        return builder(tuple(items) if len(items) > 1 else items[0])
    if base in (pl_typing.Out, pl_typing.InOut):
        inner = eval_expr(ctx, node.slice)
        if not isinstance(inner, Type) and inner not in (pl_typing.Tensor, pl_typing.Tile):
            raise ParserTypeError(f"pl.{base.__name__}[...] needs a type such as pl.Tensor[[64], pl.FP32]", span)
        return Directed(base.direction, inner)
    if base is builtins.tuple:
        return MultiReturn(tuple(eval_expr(ctx, n) for n in _index_nodes(node)))
    if base.__class__.__name__ == "MemRefDecl":          # pl.MemRef("name", slots=N)[k]
        return base[eval_expr(ctx, node.slice)]
    if isinstance(base, Expr):
        if isinstance(base.type, TaskIdArrayType):              # tids[i]: one TaskId of an array
            from pypto.language.parser.task_graph import array_get
            return array_get(ctx, base, node)
        if isinstance(base.type, TupleType):
            idx = eval_expr(ctx, node.slice)
            if not isinstance(idx, int):
                raise ParserTypeError("a tuple value is indexed by a constant integer", span)
            if not 0 <= idx < len(base.type.types):
                raise ParserTypeError(f"tuple index {idx} out of range for a {len(base.type.types)}-tuple", span)
            return TupleGetItem(base, idx, span)
        if is_shaped_expr(base):
            return _read_or_slice(ctx, node, base)
        raise ParserTypeError(f"cannot subscript {describe_value(base)}", span)
    if isinstance(node.slice, ast.Slice) or isinstance(base, (list, tuple, dict, str)):
        key = _python_key(ctx, node.slice)
        try:
            return base[key]
        except (IndexError, KeyError, TypeError) as e:
            raise ParserTypeError(f"invalid subscript of {describe_value(base)}: {e}", span) from None
    raise ParserTypeError(f"cannot subscript {describe_value(base)}", span)


def _type_builder(base):
    if base is getattr(_distributed(), "DistributedTensor", None):
        return lambda item: pl_typing.tensor_type(item, distributed=True)
    try:
        return _TYPE_BUILDERS.get(base)
    except TypeError:
        return None


def _distributed():
    from pypto.language import distributed
    return distributed


def _python_key(ctx, sl):
    if isinstance(sl, ast.Slice):
        parts = [eval_expr(ctx, p) if p is not None else None for p in (sl.lower, sl.upper, sl.step)]
        return slice(*parts)
    return eval_expr(ctx, sl)


def _dims(ctx, node, base: Expr):
    """Per dim: (offset, size, is_slice) from the subscript of a tensor / tile."""
    shape = base.type.shape
    idx_nodes = _index_nodes(node)
    if len(idx_nodes) != len(shape) and not (len(idx_nodes) == 1 and _is_full_slice(idx_nodes[0])):
        raise ParserTypeError(f"a rank-{len(shape)} value takes {len(shape)} indices (one per dim), "
                              f"got {len(idx_nodes)}", ctx.span(node),
                              hint="write ':' for the dims you keep whole, e.g. A[0:16, :]")
    out = []
    for d, dim in enumerate(shape):
        n = idx_nodes[d] if d < len(idx_nodes) else ast.Slice()
        if isinstance(n, ast.Slice):
            if n.step is not None:
                raise UnsupportedFeatureError("a slice step (A[a:b:step]) is not supported", ctx.span(n),
                                              hint="slices are contiguous; load and rearrange explicitly")
            lo = eval_expr(ctx, n.lower) if n.lower is not None else 0
            hi = eval_expr(ctx, n.upper) if n.upper is not None else _py_dim(dim)
            out.append((lo, _extent(lo, hi, ctx.span(n)), True))
        else:
            out.append((eval_expr(ctx, n), 1, False))
    return out


def _check_region_fits_value(name: str, sizes: list, value, span) -> None:
    """`dst[a:b, ...] = value` with a region of another static shape than the value (numpy refuses to
    broadcast it; assemble would silently write the value's shape at the region's offsets)."""
    shape = getattr(value.type, "shape", None)
    if shape is None or len(shape) != len(sizes):
        return
    region = [_static(n) for n in sizes]
    have = [_static(d) for d in shape]
    if any(r is not None and v is not None and r != v for r, v in zip(region, have)):
        show = [r if r is not None else "?" for r in region]
        raise ParserTypeError(f"'{name}[...]' is a {show} region, the value assigned to it is "
                              f"{[v if v is not None else '?' for v in have]}", span,
                              hint="make the slice's extents the value's shape")


def _static(n):
    if isinstance(n, ConstInt):
        return n.value
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _is_full_slice(n) -> bool:
    return isinstance(n, ast.Slice) and n.lower is None and n.upper is None and n.step is None


def _py_dim(dim):
    return dim.value if isinstance(dim, ConstInt) else dim


def _extent(lo, hi, span):
    """hi - lo, folded when static or when the symbolic parts cancel (`x[i:i+16]`, `x[q*8:(q+1)*8]`)."""
    if not isinstance(lo, Expr) and not isinstance(hi, Expr):
        return hi - lo
    folded = constant_difference(hi, lo)
    if folded is not None:
        return folded
    if lo == 0 and not isinstance(lo, Expr):
        return hi
    return BinaryExpr("sub", to_expr(hi, span), to_expr(lo, span), span=span)


def _read_or_slice(ctx, node, base: Expr):
    span = ctx.span(node)
    idx = _index_nodes(node)
    if getattr(ctx, "host_level", False) and isinstance(base.type, TensorType) \
            and len(idx) < len(base.type.shape) and not any(isinstance(i, ast.Slice) for i in idx):
        # x[r] (or x[i, r]): rank r's shard of a stacked host tensor (distributed), one leading dim per index
        if isinstance(base.type, DistributedTensorType):
            name = getattr(base, "name_hint", "x")
            raise TypeCheckError(f"{name}[...] indexes a stacked host tensor (one shard per rank), but '{name}' is a "
                                 "window", span, hint="index the host tensor parameters (one shard per rank), not "
                                                      "windows")
        for i in idx:
            base = build_call("pld.stacked_index", [base, to_expr(eval_expr(ctx, i), span)], {}, span)
        return base
    dims = _dims(ctx, node, base)
    if len(_index_nodes(node)) == len(dims) and not any(is_slice for _, _, is_slice in dims):
        return build_call("read", [base, to_expr([o for o, _, _ in dims], span)], {}, span)
    shape = [s for _, s, _ in dims]
    offsets = [o for o, _, _ in dims]
    return build_call("slice", [base, to_expr(shape, span), to_expr(offsets, span)], {}, span)


def assign_subscript(ctx, target: ast.Subscript, value, span) -> None:
    """`dst[...] = value`: assemble (regions) or write (single elements), rebinding `dst`."""
    if not isinstance(target.value, ast.Name):
        raise ParserSyntaxError("subscript assignment needs a plain name on the left (dst[...] = value)", span)
    name = target.value.id
    base = ctx.lookup(name, target.value)
    if isinstance(getattr(base, "type", None), TaskIdArrayType):   # tids[i] = tid
        from pypto.language.parser.task_graph import array_set
        return array_set(ctx, name, base, target, value, span)
    if not is_shaped_expr(base):
        raise ParserTypeError(f"cannot assign into {describe_value(base)} '{name}'", span,
                              hint="subscript assignment writes into tensors and tiles")
    if ctx.strict_ssa:
        raise SSAViolationError(f"SSA violation: subscript assignment rebinds '{name}'", span,
                                hint="with strict_ssa=True write dst = pl.assemble(dst, src, offsets)",
                                previous_span=ctx.def_spans.get(name))
    dims = _dims(ctx, target, base)
    offsets = [o for o, _, _ in dims]
    element = not any(is_slice for _, _, is_slice in dims) and not is_shaped_expr(value)
    if element:
        result = build_call("write", [base, to_expr(offsets, span), to_expr(value, span)], {}, span)
    else:
        if not is_shaped_expr(value):
            raise ParserTypeError(f"the value stored into '{name}[...]' must be a tensor or tile, "
                                  f"got {describe_value(value)}", span)
        _check_region_fits_value(name, [size for _, size, _ in dims], value, span)
        result = build_call("assemble", [base, value, to_expr(offsets, span)], {}, span)
    if isinstance(result.type, (TensorType, TileType)):
        var = ctx.assign_var(name, result.type, span)
        ctx.emit(AssignStmt(var, result, span))
    else:
        ctx.emit(EvalStmt(result, span))
