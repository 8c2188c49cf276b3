"""Calls: DSL ops (`pl.add(...)`, `pl.tile.load(...)`), scalar helpers (`pl.min`, `pl.cast`,
`pl.scalar_<op>`), program functions (`self.f(...)`, module-level `ir.Function`s called by
name), `@pl.inline` templates, and compile-time constructors (`pl.MemRef`, `pl.TileView`,
`pl.dynamic`, `pl.const`, `pl.split`, builtins such as `len` / `min` on Python values).
"""

from __future__ import annotations

import ast
import builtins
import enum
import math
import warnings

from pypto.errors import PyptoError, PyptoWarning, TypeCheckError
from pypto.ir.expr import BinaryExpr, Call, Expr, GlobalVar
from pypto.ir.dtypes import DataType
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.function import Function
from pypto.ir.types import DistributedTensorType, ScalarType, TensorType, TupleType, UnknownType, static_dims
from pypto.language import scopes, typing as pl_typing
from pypto.language.parser.diagnostics import InvalidOperationError, ParserSyntaxError, ParserTypeError
from pypto.language.parser.dispatch import eval_expr, expression
from pypto.language.parser.expressions import NO_OP
from pypto.language.parser.inline import InlineFunction, expand_inline
from pypto.language.parser import dump_tags, task_graph
from pypto.language.parser.op_bridge import build_call
from pypto.language.parser.values import (MethodRef, describe_value, is_scalar_expr, to_expr, to_op_arg)

_CONSTEXPR_CALLS = {pl_typing.TileView, pl_typing.TensorView, pl_typing.MemRef, pl_typing.dynamic,
                    pl_typing.const, scopes.split, scopes.cross_core_slot}
_PY_BUILTINS = {builtins.len, builtins.min, builtins.max, builtins.abs, builtins.int, builtins.float,
                builtins.bool, builtins.tuple, builtins.list, builtins.sum, builtins.round, builtins.isinstance,
                builtins.str, builtins.divmod, builtins.zip, builtins.enumerate, builtins.any, builtins.all}
_STATEMENT_ONLY = {scopes.range: "the iterator of a for loop", scopes.parallel: "the iterator of a for loop",
                   scopes.unroll: "the iterator of a for loop", scopes.pipeline: "the iterator of a for loop",
                   scopes.while_: "the iterator of a for loop", scopes.split_aiv: "the iterator of a for loop",
                   scopes.at: "a with statement", scopes.cluster: "a with statement",
                   scopes.spmd: "a with statement", scopes.incore: "a with statement", scopes.cond: "the first statement of a pl.while_ body",
                   scopes.yield_: "a statement (x = pl.yield_(...))", scopes.func_attr: "a statement",
                   scopes.dump_tag: "a statement (pl.dump_tag(t) before the kernel calls that take t)"}


def eval_call_parts(ctx, node: ast.Call):
    """Evaluate positional and keyword arguments (Python values stay Python)."""
    args = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            inner = eval_expr(ctx, a.value)
            if not isinstance(inner, (list, tuple)):
                raise ParserTypeError(f"cannot unpack {describe_value(inner)} with *", ctx.span(a))
            args.extend(inner)
        else:
            args.append(eval_expr(ctx, a))
    kwargs = {}
    for kw in node.keywords:
        if kw.arg is None:
            kwargs.update(eval_expr(ctx, kw.value))
        else:
            kwargs[kw.arg] = eval_expr(ctx, kw.value)
    return args, kwargs


def _is_dtype_method(callee) -> bool:
    """`pl.FP32.get_byte()` and the other dtype queries are compile-time facts."""
    return getattr(callee, "__self__", None).__class__ is DataType and callable(callee)


@expression(ast.Call)
def parse_call(ctx, node: ast.Call):
    callee = eval_expr(ctx, node.func)
    span = ctx.span(node)
    if _member(callee, _STATEMENT_ONLY):
        raise InvalidOperationError(f"pl.{callee.__name__}(...) can only be used as {_STATEMENT_ONLY[callee]}", span)
    if callee is NO_OP:
        return None
    if callee is builtins.range:
        raise ParserSyntaxError("Python's range() cannot be used in a kernel", span,
                                hint="use pl.range(...) (or pl.parallel / pl.unroll / pl.pipeline)")
    if callee is builtins.print:
        raise InvalidOperationError("print() does nothing inside a kernel", span,
                                    hint="use pl.static_print(...) to print at parse time")
    if callee is scopes.submit or callee is scopes.spmd_submit:
        raise ParserSyntaxError(f"pl.{callee.__name__}(...) is a statement: `results..., tid = "
                                f"pl.{callee.__name__}(self.kernel, ...)`", span)
    if callee is scopes.static_print or callee is scopes.static_assert:
        return static_check(ctx, node, callee)
    args, kwargs = eval_call_parts(ctx, node)
    if isinstance(callee, scopes.DslOp):
        return op_call(ctx, node, callee.path, args, kwargs)
    if isinstance(callee, MethodRef):
        return function_call(ctx, node, callee.name, args, kwargs)
    if isinstance(callee, Function):
        ctx.env.auto_added.setdefault(callee.name, callee)
        return function_call(ctx, node, callee.name, args, kwargs, callee=callee)
    specialize = getattr(callee, "pypto_specialize", None)
    if specialize is not None:
        # A @pl.jit sub-kernel: specialized for the types / constant values of these arguments.
        device = kwargs.pop("device", None)      # a host orchestrator's dispatch to rank `device`
        fn, kept_args = specialize(args, kwargs, span)
        ctx.env.auto_added.setdefault(fn.name, fn)
        return function_call(ctx, node, fn.name, kept_args, {} if device is None else {"device": device}, callee=fn)
    if isinstance(callee, InlineFunction):
        return expand_inline(ctx, node, callee, args, kwargs)
    if _member(callee, _CONSTEXPR_CALLS) or _member(callee, _PY_BUILTINS) or _is_dtype_method(callee) or \
            (isinstance(callee, type) and issubclass(callee, enum.Enum)):
        return _compile_time_call(callee, args, kwargs, span)
    raise InvalidOperationError(f"cannot call {describe_value(callee)} inside a kernel", span,
                                hint="kernels call DSL ops (pl.*), program functions (self.f) and @pl.inline helpers")


def _compile_time_call(callee, args: list, kwargs: dict, span):
    """pl.MemRef / pl.TileView / pl.dynamic / pl.const / pl.split / enum(...) / builtins on Python values."""
    if _member(callee, _PY_BUILTINS) and any(isinstance(a, Expr) for a in args):
        raise InvalidOperationError(f"{callee.__name__}() works on compile-time values only here", span,
                                    hint="use the DSL op (e.g. pl.min / pl.max / pl.cast) on runtime values")
    try:
        return callee(*args, **kwargs)
    except PyptoError:
        raise
    except (TypeError, ValueError) as e:
        raise ParserTypeError(f"invalid call of {getattr(callee, '__name__', callee)}: {e}", span) from None


def _member(value, collection) -> bool:
    try:
        return value in collection
    except TypeError:  # unhashable compile-time values (lists, dicts)
        return False


def static_check(ctx, node, callee):
    args, kwargs = eval_call_parts(ctx, node)
    if callee is scopes.static_print:
        print(f"[pl.static_print {ctx.span(node)}]", *[a if not isinstance(a, Expr) else repr(a) for a in args])
        return None
    if not args:
        raise ParserSyntaxError("pl.static_assert needs a condition", ctx.span(node))
    cond = args[0]
    if isinstance(cond, Expr):
        raise ParserTypeError("pl.static_assert needs a compile-time condition", ctx.span(node))
    if not cond:
        msg = args[1] if len(args) > 1 else kwargs.get("msg", "static assertion failed")
        raise InvalidOperationError(f"pl.static_assert failed: {msg}", ctx.span(node))
    return None


_SPLIT_BOUNDARY = ("aiv_shard", "aic_gather", "tensor.aiv_shard", "tensor.aic_gather", "tile.aiv_shard", "tile.aic_gather")


def _split_boundary(ctx, path: str, args: list, kwargs: dict, span) -> None:
    """pl.aiv_shard / pl.aic_gather on a Tensor exist only inside a pl.split_aiv region, whose mode they take."""
    first = args[0] if args else kwargs.get("x")
    if path not in _SPLIT_BOUNDARY:
        return
    if ctx.split_modes and not isinstance(getattr(first, "type", None), TensorType):
        kwargs.setdefault("split", ctx.split_modes[-1].value)    # a tile inside the region: same default
        return
    if path.startswith("tile."):              # the tile form's own type rule reports a Tensor operand
        return
    if not isinstance(getattr(first, "type", None), TensorType):
        return
    if not ctx.split_modes:
        raise InvalidOperationError(f"pl.{path} on a Tensor is only valid inside a `for lane in pl.split_aiv(...)` "
                                    "region", span, hint="the region's mode says how the operand is split; on tiles "
                                                         "use pl.tile.aiv_shard(t, split=N)")
    kwargs.setdefault("split", ctx.split_modes[-1].value)


def op_call(ctx, node, path: str, args: list, kwargs: dict):
    span = ctx.span(node)
    attrs = kwargs.pop("attrs", None)
    _split_boundary(ctx, path, args, kwargs, span)
    scalar = _scalar_form(path, args, kwargs, span)
    if scalar is not None:
        return scalar
    if path.startswith("array."):
        tasks = task_graph.array_op(path, args, kwargs, span)
        if tasks is not None:
            return tasks
    if path == "system.task_dummy":
        return task_graph.task_dummy(args, kwargs, span)
    if path in task_graph.CREATE_TENSOR_PATHS and kwargs.get("manual_dep") is not None:
        attrs = task_graph.manual_dep_attrs(kwargs, attrs, span)
    try:
        call = build_call(path, [to_op_arg(a, span) for a in args], kwargs, span)
    except PyptoError:
        raise
    except (TypeError, ValueError) as e:   # the op layer choked on a Python value the user passed
        raise ParserTypeError(f"pl.{path}: invalid argument ({e})", span,
                              hint="op arguments are tensors, tiles, scalars, numbers, lists of them, dtypes or enums") from e
    _reject_write_to_input(ctx, path, call, span)
    if attrs:
        if not isinstance(call, Call):
            raise InvalidOperationError(f"pl.{path} does not produce a call that can carry attrs", span)
        call = call.replace(attrs=dict(attrs))
    return call


def _reject_write_to_input(ctx, path: str, call, span) -> None:
    """An op that writes an Orchestration function's tensor parameter not marked pl.Out / pl.InOut: the
    forgotten `pl.Out` (it used to fail only at run time, at the store, as "a kernel wrote a tensor passed as
    an In parameter"). Kernels and inline functions may write their In parameters (the caller decides)."""
    if not isinstance(call, Call) or not hasattr(call.op, "effects"):
        return
    for i, effect in call.op.effects.items():
        target = call.args[i] if i < len(call.args) else None
        if effect in ("write", "readwrite") and target in getattr(ctx, "caller_inputs", ()):
            name = target.name_hint
            where = f" at line {target.span.line}" if target.span is not None and target.span.is_known() else ""
            raise ParserTypeError(f"pl.{path} writes '{name}', an input parameter", span,
                                  hint=f"declare it as {name}: pl.Out[...]{where} (or pl.InOut[...] when the kernel also "
                                       "reads it)",
                                  note=f"'{name}' is declared at line {target.span.line}" if where else "")


def _reject_input_passed_for_writing(ctx, fname: str, param_names: list, directions: list, args: list, span,
                                     warn_only: bool = False) -> None:
    """An Orchestration function passing one of its In tensors where the callee writes (pl.Out / pl.InOut):
    the forgotten `pl.Out` on the caller (otherwise found only at run time, at the callee's store). A
    distributed window is the ranks' shared buffer, not a caller's array: it is written through an In.
    An inline callee only warns: the reference compiles such programs (its Qwen3 jit example updates an
    In KV cache through one), and the simulator refuses the write when it runs."""
    for pname, direction, arg in zip(param_names, directions, args):
        if direction is not ParamDirection.In and arg in getattr(ctx, "caller_inputs", ()) \
                and not isinstance(arg.type, DistributedTensorType):
            name = arg.name_hint
            where = f" at line {arg.span.line}" if arg.span is not None and arg.span.is_known() else ""
            error = ParserTypeError(f"{fname}() writes its parameter '{pname}' (pl.{direction.name}), and '{name}' "
                                    "passed for it is an input parameter", span,
                                    hint=f"declare it as {name}: pl.Out[...]{where} (or pl.InOut[...] when the "
                                         "kernel also reads it)")
            if not warn_only:
                raise error
            warnings.warn_explicit(str(error), PyptoWarning, span.filename or "<pypto>", span.line or 0)


def _scalar_form(path: str, args: list, kwargs: dict, span):
    """`pl.xor_(a, b)` on scalars (the printer's spelling of a scalar xor; the op layer has no such op)."""
    if path == "xor_" and len(args) == 2 and all(is_scalar_expr(a) or isinstance(a, int) for a in args):
        return BinaryExpr("xor", to_expr(args[0], span), to_expr(args[1], span), dtype=kwargs.get("dtype"), span=span)
    return None


def function_call(ctx, node, name: str, args: list, kwargs: dict, callee: Function | None = None):
    span = ctx.span(node)
    attrs = kwargs.pop("attrs", None)
    if "device" in kwargs:                      # host orchestrator dispatch to one rank (distributed)
        attrs = {**(attrs or {}), "device": to_expr(kwargs.pop("device"), span)}
    elif attrs and "device" in attrs:           # the printed form attrs={'device': 0}: a constant rank
        attrs = {**attrs, "device": to_expr(attrs["device"], span)}
    sig = ctx.env.signatures.get(name)
    if callee is not None:
        param_names = [p.name_hint for p in callee.params]
        param_types = [p.type for p in callee.params]
        directions = list(callee.param_directions)
        return_types = list(callee.return_types)
    elif sig is not None:
        param_names, param_types, directions = sig.param_names, sig.param_types, list(sig.directions or ())
        return_types = sig.return_types
        if return_types is None:
            return_types = ctx.env.resolve_return(name)
    else:
        raise InvalidOperationError(f"the program has no function '{name}'", span)
    values = list(args)
    for key, v in kwargs.items():
        if key not in param_names:
            raise ParserTypeError(f"{name}() got an unexpected keyword argument '{key}'", span,
                                  hint=f"parameters: {', '.join(param_names)}")
        idx = param_names.index(key)
        while len(values) <= idx:
            values.append(None)
        values[idx] = v
    if len(values) != len(param_types) or any(v is None for v in values):
        raise ParserTypeError(f"{name}() takes {len(param_types)} argument(s) ({', '.join(param_names)}), "
                              f"got {len([v for v in values if v is not None])}", span)
    values, no_dep = task_graph.unwrap_no_dep(values)     # self.k(pl.no_dep(t)): t leaves tracking for this task
    attrs = task_graph.call_attrs(attrs, no_dep, len(values), span)
    exprs = []
    for pname, ptype, v in zip(param_names, param_types, values):
        e = to_expr(v, span, "argument")
        _check_arg_type(name, pname, ptype, e, span)
        _check_arg_shape(name, pname, ptype, e.type, span, host_dispatch=getattr(ctx, "host_level", False))
        exprs.append(e)
    attrs = dump_tags.call_attrs(ctx, attrs, exprs, span) or None
    inline = callee is not None and callee.func_type is FunctionType.Inline
    _reject_input_passed_for_writing(ctx, name, param_names, directions, exprs, span, warn_only=inline)
    if len(return_types) == 1:
        rtype = return_types[0]
    elif return_types:
        rtype = TupleType(return_types)
    else:
        rtype = UnknownType()
    return Call(GlobalVar(name, span), exprs, type=rtype, attrs=attrs, span=span)


def _check_arg_type(fname, pname, ptype, e: Expr, span) -> None:
    from pypto.ir.ops.common import describe
    at = e.type
    if isinstance(ptype, ScalarType):
        if not isinstance(at, ScalarType):
            raise ParserTypeError(f"{fname}(): argument '{pname}' expects {describe(ptype)}, got {describe(at)}", span)
        return
    if type(at) is not type(ptype) and not (isinstance(at, type(ptype)) or isinstance(ptype, type(at))):
        raise ParserTypeError(f"{fname}(): argument '{pname}' expects {describe(ptype)}, got {describe(at)}", span)
    if hasattr(ptype, "dtype") and hasattr(at, "dtype") and ptype.dtype is not at.dtype:
        raise ParserTypeError(f"{fname}(): argument '{pname}' expects dtype {ptype.dtype.name}, got {at.dtype.name}", span)


def _check_arg_shape(fname, pname, ptype, at, span, *, host_dispatch: bool) -> None:
    """A tensor whose static shape differs from the parameter's static shape: refused at the call (at run
    time the kernel would index it with the wrong shape). Dims that are symbolic on either side are left to
    run time. A HOST orchestrator's dispatch may bind a distributed window of another shape with the same
    element count (a `[64]` window for a `[1, 64]` parameter): a window is raw memory, and the chip sees it
    with the parameter's shape (pypto/runtime/sim/host_level.py `_window_as_param`)."""
    from pypto.ir.ops.common import dims_equal, fmt_shape
    if not (isinstance(ptype, TensorType) and isinstance(at, TensorType)):
        return
    want, got = static_dims(ptype.shape), static_dims(at.shape)
    if host_dispatch and isinstance(at, DistributedTensorType):
        if want is None or got is None or math.prod(want) == math.prod(got):
            return
    elif dims_equal(ptype.shape, at.shape) or len(ptype.shape) != len(at.shape) and (want is None or got is None):
        return
    raise TypeCheckError(f"{fname}(): argument '{pname}' expects a tensor of shape {fmt_shape(ptype.shape)}, "
                         f"got shape {fmt_shape(at.shape)}", span,
                         hint=f"pass a tensor of the shape of {fname}'s parameter '{pname}' (a slice or reshape "
                              "of it), or declare the parameter with the shape passed")