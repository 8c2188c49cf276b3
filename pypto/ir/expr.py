"""IR expressions. A Var is an identity (its name is cosmetic); everything else is a value.

Scalar arithmetic is one BinaryExpr / UnaryExpr class keyed by an operator name (the
reference's Add/Sub/... classes collapse into a table), Cast is a UnaryExpr whose result
dtype differs from its operand's.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from pypto.ir.dtypes import BOOL, FP32, INDEX, DataType
from pypto.ir.node import IGNORE, USUAL, IRTuple, Node, set_field
from pypto.ir.span import Span
from pypto.ir.types import Dims, ScalarType, TupleType, Type, UnknownType


class Expr(Node):
    __slots__ = ("type",)

    # + - * // % of integer scalars build BinaryExprs (set after BinaryExpr exists: _arith_method).


class Var(Expr):
    """A named value. Identity is the object; `name_hint` only guides printing."""
    __slots__ = ("name_hint",)
    FIELDS = (("name_hint", IGNORE), ("type", USUAL))

    def __init__(self, name_hint: str, type: Type, span: Optional[Span] = None):
        set_field(self, "name_hint", name_hint)
        set_field(self, "type", type)
        set_field(self, "span", span)

    @property
    def name(self) -> str:
        return self.name_hint

    @property
    def unique_id(self) -> int:
        """An integer naming this Var's identity (the reference's per-Var id): a Var is its object."""
        return id(self)


class IterArg(Var):
    """A loop-carried value: a Var bound per iteration, starting at `init_value`."""
    __slots__ = ("init_value",)
    FIELDS = (("name_hint", IGNORE), ("type", USUAL), ("init_value", USUAL))

    def __init__(self, name_hint: str, type: Type, init_value: Expr, span: Optional[Span] = None):
        set_field(self, "name_hint", name_hint)
        set_field(self, "type", type)
        set_field(self, "init_value", init_value)
        set_field(self, "span", span)


class ConstInt(Expr):
    __slots__ = ("value", "dtype")
    FIELDS = (("value", USUAL), ("dtype", USUAL))
    PLAIN_FIELDS = frozenset({"value"})          # a Python number: no traversal enters it

    def __init__(self, value: int, dtype: DataType = INDEX, span: Optional[Span] = None):
        set_field(self, "value", int(value))
        set_field(self, "dtype", dtype)
        set_field(self, "type", ScalarType(dtype))
        set_field(self, "span", span)

    def __eq__(self, other):
        """An integer constant equals the Python int it holds (the reference's callers write
        `shape[0] == 1`); between nodes, equality stays identity, as for every IR node."""
        if isinstance(other, int) and not isinstance(other, bool):
            return self.value == other
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    # Identity hash, as for every node: a ConstInt and the int it equals are never mixed as keys of
    # one dict (memo tables key nodes by identity, and hashing by value would chain equal constants).
    __hash__ = Expr.__hash__


class ConstFloat(Expr):
    __slots__ = ("value", "dtype")
    FIELDS = (("value", USUAL), ("dtype", USUAL))
    PLAIN_FIELDS = frozenset({"value"})

    def __init__(self, value: float, dtype: DataType = FP32, span: Optional[Span] = None):
        if dtype is FP32:  # literals carry the precision they will be computed in
            import numpy as np
            value = float(np.float32(value))
        self._set(value=float(value), dtype=dtype, type=ScalarType(dtype), span=span)


class ConstBool(Expr):
    __slots__ = ("value",)
    FIELDS = (("value", USUAL),)
    PLAIN_FIELDS = frozenset({"value"})

    def __init__(self, value: bool, span: Optional[Span] = None):
        self._set(value=bool(value), type=ScalarType(BOOL), span=span)


class GlobalVar(Expr):
    """A reference to a function of the program, by name."""
    __slots__ = ("name",)
    FIELDS = (("name", USUAL),)

    def __init__(self, name: str, span: Optional[Span] = None):
        self._set(name=name, type=UnknownType(), span=span)


class Call(Expr):
    """A call of a registered op (`op` is an OpDef) or of a program function (`op` is a GlobalVar).

    kwargs: user-visible compile-time keyword arguments (plain Python values, enums, dtypes).
    attrs:  compiler-internal metadata (e.g. arg_directions), also plain values.
    """
    __slots__ = ("op", "args", "kwargs", "attrs")
    FIELDS = (("op", USUAL), ("args", USUAL), ("kwargs", USUAL), ("type", USUAL), ("attrs", USUAL))

    def __init__(self, op, args: Sequence[Expr], kwargs: Optional[dict] = None, type: Optional[Type] = None,
                 attrs: Optional[dict] = None, span: Optional[Span] = None):
        if not (kwargs is None or isinstance(kwargs, dict)) or isinstance(type, (Span, dict)) \
                or isinstance(attrs, (Type, Span)):
            kwargs, type, attrs, span = _reference_call_form(kwargs, type, attrs, span)
        set_field(self, "op", op)
        set_field(self, "args", IRTuple(args))
        set_field(self, "kwargs", dict(kwargs or {}))
        set_field(self, "attrs", dict(attrs or {}))
        set_field(self, "type", type if type is not None else UnknownType())
        set_field(self, "span", span)

    @property
    def op_name(self) -> str:
        return self.op.name

    def is_function_call(self) -> bool:
        return isinstance(self.op, GlobalVar)

    @property
    def arg_directions(self) -> list:
        """The call site's per-argument directions (`attrs["arg_directions"]`; [] when none are given)."""
        return list(self.attrs.get("arg_directions") or [])

    def without_arg(self, i: int) -> "Call":
        """This call with argument i left out; the per-argument attrs (arg_directions, the pl.no_dep
        positions in arg_direction_overrides) keep following their arguments."""
        attrs = dict(self.attrs)
        if attrs.get("arg_directions"):
            attrs["arg_directions"] = [d for j, d in enumerate(attrs["arg_directions"]) if j != i]
        if attrs.get("arg_direction_overrides"):
            attrs["arg_direction_overrides"] = [j - (j > i) for j in attrs["arg_direction_overrides"] if j != i]
            if not attrs["arg_direction_overrides"]:
                del attrs["arg_direction_overrides"]
        return self.replace(args=tuple(a for j, a in enumerate(self.args) if j != i), attrs=attrs)


def _reference_call_form(*positional):
    """Sort the reference's positional Call forms ((span), (type, span), (kwargs, span), (kwargs, type, span),
    (kwargs, attrs, type, span)) into kwargs / type / attrs / span by the kind of each value."""
    kwargs = type_ = attrs = span = None
    for value in positional:
        if value is None:
            continue
        if isinstance(value, Span):
            span = value
        elif isinstance(value, Type):
            type_ = value
        elif kwargs is None and isinstance(value, dict):
            kwargs = value
        else:
            attrs = dict(value)
    return kwargs, type_, attrs, span


# name → python-operator symbol (None: printed as a pl.* function call)
BINARY_OPS = {
    "add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "truediv": "/",
    "pow": "**", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "and": "and", "or": "or", "bitand": "&", "bitor": "|", "bitxor": "^", "shl": "<<", "shr": ">>",
    "min": None, "max": None, "xor": None,
}
COMPARE_OPS = {"eq", "ne", "lt", "le", "gt", "ge"}
LOGICAL_OPS = {"and", "or", "xor"}
UNARY_OPS = {"neg": "-", "not": "not ", "bitnot": "~", "abs": None, "cast": None}


def _arithmetic_dtype(left: DataType, right_type) -> DataType:
    """The left operand's dtype, except that an integer combined with a float is a float (`i * 0.5`):
    typing `b * 1e-6` as an index let it pass as an offset until the simulator used it."""
    if left.is_int() and isinstance(right_type, ScalarType) and right_type.dtype.is_float():
        return right_type.dtype
    return left


class BinaryExpr(Expr):
    __slots__ = ("op", "lhs", "rhs")
    FIELDS = (("op", USUAL), ("lhs", USUAL), ("rhs", USUAL), ("type", USUAL))
    PLAIN_FIELDS = frozenset({"op"})             # the operator's name

    def __init__(self, op: str, lhs: Expr, rhs: Expr, dtype: Optional[DataType] = None, span: Optional[Span] = None):
        if op not in BINARY_OPS:
            raise ValueError(f"unknown scalar binary operator {op!r}")
        if dtype is None:
            dtype = BOOL if op in COMPARE_OPS or op in LOGICAL_OPS else _arithmetic_dtype(lhs.type.dtype, rhs.type)
        set_field(self, "op", op)
        set_field(self, "lhs", lhs)
        set_field(self, "rhs", rhs)
        set_field(self, "type", ScalarType(dtype))
        set_field(self, "span", span)

    @property
    def dtype(self) -> DataType:
        return self.type.dtype

    @property
    def left(self) -> Expr:  # the reference's name for lhs
        return self.lhs

    @property
    def right(self) -> Expr:
        return self.rhs


class UnaryExpr(Expr):
    """neg / not / bitnot / abs, and cast (the result dtype differs from the operand's)."""
    __slots__ = ("op", "operand")
    FIELDS = (("op", USUAL), ("operand", USUAL), ("type", USUAL))
    PLAIN_FIELDS = frozenset({"op"})

    def __init__(self, op: str, operand: Expr, dtype: Optional[DataType] = None, span: Optional[Span] = None):
        if op not in UNARY_OPS:
            raise ValueError(f"unknown scalar unary operator {op!r}")
        if dtype is None:
            dtype = BOOL if op == "not" else operand.type.dtype
        self._set(op=op, operand=operand, type=ScalarType(dtype), span=span)

    @property
    def dtype(self) -> DataType:
        return self.type.dtype


def Cast(operand: Expr, dtype: DataType, span: Optional[Span] = None) -> UnaryExpr:
    return UnaryExpr("cast", operand, dtype, span)


class MakeTuple(Expr):
    __slots__ = ("elements",)
    FIELDS = (("elements", USUAL),)

    def __init__(self, elements: Sequence[Expr], span: Optional[Span] = None):
        elements = Dims(elements)
        self._set(elements=elements, type=TupleType([e.type for e in elements]), span=span)


class TupleGetItem(Expr):
    __slots__ = ("tuple", "index")
    FIELDS = (("tuple", USUAL), ("index", USUAL))
    PLAIN_FIELDS = frozenset({"index"})          # a Python int

    def __init__(self, tuple_expr: Expr, index: int, span: Optional[Span] = None):
        t = tuple_expr.type
        if not isinstance(t, TupleType):
            raise TypeError(f"TupleGetItem needs a tuple-typed value, got {type(t).__name__}")
        if not 0 <= index < len(t.types):
            raise IndexError(f"tuple index {index} out of range for a {len(t.types)}-tuple")
        self._set(tuple=tuple_expr, index=int(index), type=t.types[index], span=span)


def const(value: Any, dtype: Optional[DataType] = None, span: Optional[Span] = None) -> Expr:
    """Wrap a Python number as an IR constant (ints → INDEX, floats → FP32 unless dtype says)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return ConstBool(value, span)
    if isinstance(value, int):
        if dtype is not None and dtype.is_float():
            return ConstFloat(float(value), dtype, span)
        return ConstInt(value, dtype or INDEX, span)
    if isinstance(value, float):
        return ConstFloat(value, dtype or FP32, span)
    raise TypeError(f"cannot make an IR constant from {type(value).__name__}")


def _scalar_arith(op: str, lhs, rhs):
    """Scalar arithmetic in plain Python (`NR * SIZE` with NR = pl.dynamic("NR")): an annotation of a DSL
    function is evaluated by Python when the class body runs, before the parser reads it, so the symbolic
    dims of a shape must survive Python's own arithmetic.

    lhs <op> rhs as a BinaryExpr when both sides are integer scalars (an Expr of ScalarType or a Python
    int), else NotImplemented (Python then raises its usual TypeError)."""
    def scalar(v):
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return ConstInt(v, INDEX)
        if isinstance(v, Expr) and isinstance(v.type, ScalarType) and v.type.dtype.is_int():
            return v
        return None

    a, b = scalar(lhs), scalar(rhs)
    if a is None or b is None:
        return NotImplemented
    return BinaryExpr(op, a, b)


def _arith_method(op: str, reflected: bool):
    def method(self, other):
        return _scalar_arith(op, other, self) if reflected else _scalar_arith(op, self, other)
    method.__name__ = f"__{'r' if reflected else ''}{op}__"
    return method


for _py, _op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("floordiv", "floordiv"), ("mod", "floormod")):
    setattr(Expr, f"__{_py}__", _arith_method(_op, False))
    setattr(Expr, f"__r{_py}__", _arith_method(_op, True))
del _py, _op


def as_int(e) -> Optional[int]:
    """The compile-time integer value of an expression, or None."""
    if isinstance(e, int) and not isinstance(e, bool):
        return e
    if isinstance(e, ConstInt):
        return e.value
    return None
