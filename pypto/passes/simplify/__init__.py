"""Simplify: fold scalar constants, propagate them (into shapes inside types too), drop dead scalars,
and apply the local op rewrites of `rules.py` (`tile.muls(x, 1.0)` → x, ...).

Requires: — / Produces: — / Invalidates: —
Reference: pass doc 05 (compiler-and-runtime.md §2, dumps 05 and 45).

    before:  K: Scalar[INDEX] = 32 * 2;  t: Tile[[K, 64], FP32] = pl.tile.create([K, 64], ...)
    after:   t: Tile[[64, 64], FP32] = pl.tile.create([64, 64], ...)
    Integer `//` and `%` fold with floor semantics (Python's), like the hardware's scalar unit.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from pypto.ir.expr import BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, IterArg, UnaryExpr, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, EvalStmt, SeqStmts
from pypto.ir.types import MemRef, ScalarType, TensorType, TileType, TupleType
from pypto.ir.visitor import IRMutator, preorder
from pypto.passes.analysis import used_vars, vars_in_type
from pypto.passes.base import function_pass
from pypto.passes.properties import PassProperties
from pypto.passes.simplify.rules import apply_rules

_INT_FOLD = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "floordiv": lambda a, b: a // b if b else None,   # floor division (Python and PTO scalar semantics)
    "floormod": lambda a, b: a % b if b else None,    # sign of the divisor, matching floordiv
    "min": min, "max": max, "bitand": operator.and_, "bitor": operator.or_, "bitxor": operator.xor,
    "shl": operator.lshift, "shr": operator.rshift,
}
_FLOAT_FOLD = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "min": min, "max": max,
               "truediv": lambda a, b: a / b if b else None}
_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge}


def _const_value(e):
    if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
        return e.value
    return None


def _make_const(value, dtype, span):
    if dtype.kind == "bool":
        return ConstBool(bool(value), span)
    if dtype.is_float():
        if math.isnan(value) or math.isinf(value):
            return None
        return ConstFloat(float(np.dtype(dtype.to_numpy()).type(value)) if dtype.name != "FP32" else value, dtype, span)
    return ConstInt(int(value), dtype, span)


def fold_binary(e: BinaryExpr):
    """The folded constant for a BinaryExpr of constants (or an identity simplification), else e."""
    a, b = _const_value(e.lhs), _const_value(e.rhs)
    if a is not None and b is not None:
        if e.op in _COMPARE:
            return ConstBool(_COMPARE[e.op](a, b), e.span)
        if e.op in ("and", "or"):
            return ConstBool(bool(a and b) if e.op == "and" else bool(a or b), e.span)
        table = _FLOAT_FOLD if e.dtype.is_float() else _INT_FOLD if e.dtype.is_int() else {}
        fn = table.get(e.op)
        if fn is not None:
            try:
                value = fn(a, b)
            except (OverflowError, ValueError):
                value = None
            if value is not None:
                folded = _make_const(value, e.dtype, e.span)
                if folded is not None:
                    return folded
        return e
    if e.dtype.is_int():  # identities that keep the other operand's value and dtype
        if e.op in ("add", "sub") and b == 0 and e.rhs.type.dtype is e.lhs.type.dtype:
            return e.lhs
        if e.op == "add" and a == 0 and e.lhs.type.dtype is e.rhs.type.dtype:
            return e.rhs
        if e.op in ("mul", "floordiv") and b == 1 and e.rhs.type.dtype is e.lhs.type.dtype:
            return e.lhs
        if e.op == "mul" and a == 1 and e.lhs.type.dtype is e.rhs.type.dtype:
            return e.rhs
    return e


def fold_unary(e: UnaryExpr):
    a = _const_value(e.operand)
    if a is None:
        return e
    if e.op == "neg" and not isinstance(e.operand, ConstBool):
        return _make_const(-a, e.dtype, e.span) or e
    if e.op == "not":
        return ConstBool(not a, e.span)
    if e.op == "abs":
        return _make_const(abs(a), e.dtype, e.span) or e
    if e.op == "cast":
        if e.dtype.is_int() and not isinstance(e.operand, ConstBool):
            return ConstInt(int(a), e.dtype, e.span)   # truncation toward zero, like a C cast
        if e.dtype.is_float():
            return _make_const(float(a), e.dtype, e.span) or e
    return e


class _Simplifier(IRMutator):
    def __init__(self):
        self.consts: dict = {}     # scalar Var bound to a constant → that constant
        self.renamed: dict = {}    # Var whose type mentioned a folded value → Var with the new type

    # -- types ---------------------------------------------------------------
    def dims(self, dims) -> tuple:
        return tuple(self.mutate(d) for d in dims)

    def type(self, t):
        if isinstance(t, TileType):
            view = t.tile_view
            if view is not None:
                view = view.replace(valid_shape=self.dims(view.valid_shape), stride=self.dims(view.stride))
            memref = t.memref
            if memref is not None:
                memref = MemRef(self.mutate(memref.base), self.mutate(memref.byte_offset), memref.size)
            new = TileType(self.dims(t.shape), t.dtype, memref, view, t.memory_space)
        elif isinstance(t, TensorType):
            view = t.tensor_view
            if view is not None:
                view = view.replace(valid_shape=self.dims(view.valid_shape), stride=self.dims(view.stride))
            new = type(t)(self.dims(t.shape), t.dtype, t.memref, view)
        elif isinstance(t, TupleType):
            new = TupleType([self.type(x) for x in t.types])
        else:
            return t
        from pypto.ir.equality import structural_equal
        return t if structural_equal(new, t) else new

    def _needs_retype(self, t) -> bool:
        consts, renamed = self.consts, self.renamed
        if not consts and not renamed:         # nothing folded yet: no type can mention a folded value
            return False
        return any(v in consts or v in renamed for v in vars_in_type(t))

    # -- expressions ---------------------------------------------------------
    def mutate_var(self, v: Var):
        if v in self.consts:
            return self.consts[v]
        if v in self.renamed:
            return self.renamed[v]
        if self._needs_retype(v.type):
            if isinstance(v, IterArg):
                new = IterArg(v.name_hint, self.type(v.type), self.mutate(v.init_value), v.span)
            else:
                new = Var(v.name_hint, self.type(v.type), v.span)
            self.renamed[v] = new
            return new
        if isinstance(v, IterArg):
            init = self.mutate(v.init_value)
            if init is not v.init_value:
                new = v.replace(init_value=init)
                self.renamed[v] = new
                return new
        return v

    def mutate_binary_expr(self, e: BinaryExpr):
        return fold_binary(self.mutate_children(e))

    def mutate_unary_expr(self, e: UnaryExpr):
        return fold_unary(self.mutate_children(e))

    def mutate_call(self, c: Call):
        c = self.mutate_children(c)
        if self._needs_retype(c.type):
            c = c.replace(type=self.type(c.type))
        return apply_rules(c)

    def mutate_eval_stmt(self, s: EvalStmt):
        new = self.mutate_children(s)
        # a call rewritten to a bare value would leave a statement with no effect (the printer's
        # `x` line, which the parser drops): keep the call
        return new if isinstance(new.expr, Call) or not isinstance(s.expr, Call) else s

    def mutate_assign_stmt(self, s: AssignStmt):
        value = self.mutate(s.value)
        if isinstance(s.var.type, ScalarType) and isinstance(value, (ConstInt, ConstFloat, ConstBool)) \
                and value.type.dtype is s.var.type.dtype:
            self.consts[s.var] = value
            return s.replace(value=value)
        var = s.var if isinstance(s.var, (ConstInt, ConstFloat, ConstBool)) else self.mutate_var(s.var)
        return s.replace(var=var, value=value)


def _is_pure(e) -> bool:
    from pypto.passes.analysis import calls_in
    return not calls_in(e)


def _drop_dead_scalars(body, params) -> object:
    """Remove assignments of unused scalar Vars whose value has no calls (repeat until stable)."""
    while True:
        scalars = [x.var for x in preorder(body) if isinstance(x, AssignStmt) and isinstance(x.var.type, ScalarType)]
        if not scalars:                        # no scalar assignment at all: nothing to drop, skip the use walk
            return body
        used = set(used_vars(body, include_types=True))
        for p in params:
            used.update(vars_in_type(p.type))
        if all(v in used for v in scalars):
            return body
        dropper = _DeadScalarDropper(used)
        body = dropper.mutate(body)
        if not dropper.removed:
            return body


class _DeadScalarDropper(IRMutator):
    """One sweep of _drop_dead_scalars: drops the pure scalar assignments whose Var is not in `used`."""

    def __init__(self, used: set):
        self.used = used
        self.removed = False

    def mutate_seq_stmts(self, s: SeqStmts):
        s = self.mutate_children(s)
        used = self.used
        keep = [x for x in s.stmts if not (isinstance(x, AssignStmt) and isinstance(x.var.type, ScalarType)
                                           and x.var not in used and _is_pure(x.value))]
        if len(keep) != len(s.stmts):
            self.removed = True
            return s.replace(stmts=tuple(keep))
        return s


def _run(func: Function, program: Program) -> Function:
    simp = _Simplifier()
    params = tuple(simp.mutate_var(p) for p in func.params)
    body = simp.mutate(func.body)
    body = _drop_dead_scalars(body, params)
    ret = tuple(simp.type(t) for t in func.return_types)
    if body is func.body and all(a is b for a, b in zip(params, func.params)) and all(
            a is b for a, b in zip(ret, func.return_types)):
        return func
    return func.replace(params=params, body=body, return_types=ret)


def simplify():
    return function_pass("Simplify", _run, PassProperties())
