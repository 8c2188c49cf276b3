"""Simulator semantics derived from the op definitions (mirrors pypto/ir/ops/elementwise.py).

Every op whose OpDef carries a numpy function gets its simulator op here, built by the wrapper
for its `numpy_form`: the wrapper reads the operands' valid regions, computes in the widened
dtype (pypto/runtime/sim/ops/numeric.py), and writes only out's valid region.

    OpDef("tile.exp", numpy=np.exp, numpy_form="unary")  →  SIM_OPS["tile.exp"](ctx, out, x)
"""

from __future__ import annotations

import numpy as np

from pypto.errors import ValueCheckError
from pypto.ir.ops.registry import all_ops
from pypto.runtime.sim.ops.numeric import scalar_as, widen, write_valid


def _binary(fn):
    def op(ctx, out, lhs, rhs, *scratch, **kwargs):
        a = widen(lhs.view())
        b = widen(rhs.data[lhs.region])
        with np.errstate(all="ignore"):
            return write_valid(out, fn(a, b))
    return op


def _scalar(fn):
    def op(ctx, out, lhs, rhs, *scratch, **kwargs):
        a = widen(lhs.view())
        with np.errstate(all="ignore"):
            return write_valid(out, fn(a, scalar_as(rhs, lhs.data.dtype)))
    return op


def _ternary(fn):
    def op(ctx, out, lhs, rhs, rhs2, **kwargs):
        a = widen(lhs.view())
        b = widen(rhs.data[lhs.region]) if hasattr(rhs, "data") else scalar_as(rhs, lhs.data.dtype)
        with np.errstate(all="ignore"):
            return write_valid(out, fn(a, b, widen(rhs2.data[lhs.region])))
    return op


def _partial(fn):
    def op(ctx, out, lhs, rhs, **kwargs):
        a = widen(lhs.view())
        result = a.copy()
        both = tuple(slice(0, min(x, y)) for x, y in zip(lhs.valid, rhs.valid))
        with np.errstate(all="ignore"):
            result[both] = fn(a[both], widen(rhs.data[both]))
        return write_valid(out, result)
    return op


def _unary(fn):
    def op(ctx, out, x, *scratch, **kwargs):       # rsqrt's precise form adds a scratch tile (unused here)
        with np.errstate(all="ignore"):
            return write_valid(out, fn(widen(x.view())))
    return op


def _reduce(axis: int):
    """Reduce the valid region along `axis` (1: per row → [M, 1]; 0: per column → [1, N]).
    The scratch tile argument, when present, is not needed by the model and left untouched.
    max / min / arg* of an empty valid region have no value: a user error, not numpy's ValueError."""
    def wrap(fn):
        needs_an_element = fn not in (np.sum, np.prod)

        def op(ctx, out, x, tmp=None, **kwargs):
            if needs_an_element and x.view().shape[axis] == 0:
                raise ValueCheckError(f"reduces an empty valid region (valid shape {list(x.valid)}): the result "
                                      "has no value", hint="check the valid_shapes of the load or the tile")
            with np.errstate(all="ignore"):
                return write_valid(out, fn(widen(x.view()), axis=axis, keepdims=True))
        return op
    return wrap


def _expand(axis: int):
    """Combine the target with a row vector [..., M, 1] (axis=1) or a column vector [..., 1, N] (axis=0)."""
    def wrap(fn):
        def op(ctx, out, target, vec, *scratch, **kwargs):
            a = widen(target.view())
            lead = tuple(slice(0, n) for n in a.shape[:-2])     # N-D operands broadcast per leading index
            v = widen(vec.data[(*lead, slice(0, a.shape[-2]), slice(0, 1))] if axis == 1
                      else vec.data[(*lead, slice(0, 1), slice(0, a.shape[-1]))])
            with np.errstate(all="ignore"):
                return write_valid(out, fn(a, v))
        return op
    return wrap


WRAPPERS = {"unary": _unary, "binary": _binary, "scalar": _scalar, "ternary": _ternary, "partial": _partial, "row_reduce": _reduce(1),
            "col_reduce": _reduce(0), "row_expand": _expand(1), "col_expand": _expand(0)}


def table() -> dict:
    return {op.name: WRAPPERS[op.numpy_form](op.numpy) for op in all_ops().values() if op.numpy is not None}
