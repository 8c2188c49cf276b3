"""The op registry: every primitive op is declared once, declaratively.

An OpDef gives the op's name, positional argument names, typed keyword arguments with
defaults, a type-deduction rule (which rejects bad input with a message naming the op and
the argument), core affinity, memory spec and read/write effects. Where the op is regular it
also carries its numpy semantics, its PTO instruction and the tile op its tensor form lowers
to; the simulator table, the PTO emitter table and ConvertTensorToTileOps' registry derive
their entries from those fields (pypto/ir/ops/elementwise.py declares most ops that way).
Irregular ops keep hand-written entries under the same name.

    add = OpDef("tile.add", args=("lhs", "rhs"), deduce=deduce_elementwise, affinity=VECTOR)
    register_op(add)
    call = create_op_call("tile.add", [a, b], span=span)     # Call with its deduced type
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from pypto.errors import InternalError, PyptoError, TypeCheckError, ValueCheckError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, MakeTuple, const
from pypto.ir.span import Span
from pypto.ir.types import Type

# Core affinity (where ExpandMixedKernel may place the op).
VECTOR, CUBE, SHARED, MIXED = "vector", "cube", "shared", "mixed"
# Read / write effects per argument.
READ, WRITE, READWRITE = "read", "write", "readwrite"

_REQUIRED = object()

# How an OpDef's `numpy` function is applied to tile operands (pypto/runtime/sim/ops/elementwise.py):
# unary f(x); binary f(lhs, rhs); scalar f(lhs, scalar); ternary f(lhs, rhs, rhs2) (rhs a tile or a
# scalar); partial f(lhs, rhs) where rhs is valid, lhs elsewhere; row/col reduce f(x, axis, keepdims);
# row/col expand f(target, vec) with vec broadcast along the row / the column.
NUMPY_FORMS = ("unary", "binary", "scalar", "ternary", "partial", "row_reduce", "col_reduce", "row_expand",
               "col_expand")


@dataclass(frozen=True)
class Kwarg:
    """A typed keyword argument. `type` is a Python type (or tuple); enums accept their member
    name as a string (e.g. mode="round" for CastMode)."""
    type: Any
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@dataclass(eq=False)
class OpDef:
    name: str
    args: tuple = ()                      # positional argument names; a trailing "*name" takes the rest
    kwargs: dict = field(default_factory=dict)
    deduce: Optional[Callable[[tuple, dict], Type]] = None
    affinity: Optional[str] = None        # VECTOR / CUBE / SHARED / MIXED; None → inferred from operands
    output_memory: Any = None             # MemorySpace, "target_memory" (from that kwarg), "inherit", or None
    input_memory: dict = field(default_factory=dict)     # arg index → allowed MemorySpaces
    effects: dict = field(default_factory=dict)          # arg index → READ / WRITE / READWRITE
    reuses_input: Optional[int] = None    # output shares the MemRef of this input (in place / accumulate)
    not_inplace_safe: bool = False        # output may not take over a dying input's bytes (element-permuting)
    self_loading: bool = False            # reads GM tensors itself (no entry tile.load for its operands)
    min_args: Optional[int] = None        # fewer positional args allowed (optional trailing args)
    description: str = ""
    # What the other layers derive from (docs/internals.md "Adding an op"):
    numpy: Optional[Callable] = None      # numpy semantics of an elementwise / reduction / broadcast op ...
    numpy_form: Optional[str] = None      # ... and how the simulator applies it (one of NUMPY_FORMS)
    pto: Optional[str] = None             # the PTO instruction of a 1:1 op: `<pto> ins(<args>) outs(%dst)`
    pto_operands: Optional[int] = None    # only the first N args reach the instruction (the rest are IR-only)
    lowers_to: Optional[str] = None       # a tensor op ConvertTensorToTileOps replaces 1:1 by this tile op
    family: Optional[str] = None          # the family when it is not the name's prefix (test ops: testing.py)

    @property
    def category(self) -> str:
        return self.family or self.name.split(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1] if "." in self.name else self.name

    def __repr__(self) -> str:
        return f"OpDef({self.name})"


_REGISTRY: dict[str, OpDef] = {}
TEST_PREFIX = "test."       # ops registered only for compiler unit tests (pypto/ir/ops/testing.py)


def register_op(op: OpDef) -> OpDef:
    if op.name in _REGISTRY:
        raise InternalError(f"op {op.name} registered twice")
    if (op.numpy is None) != (op.numpy_form is None) or (op.numpy_form is not None and op.numpy_form not in NUMPY_FORMS):
        raise InternalError(f"op {op.name}: numpy and numpy_form go together; numpy_form is one of {NUMPY_FORMS}")
    _REGISTRY[op.name] = op
    return op


# The reference spells the comm-context queries under pld.system; they are these ops (lookup only:
# the printer and parser keep the project's spelling).
_REFERENCE_SPELLINGS = {"pld.system.get_comm_ctx": "pld.get_comm_ctx", "pld.system.rank": "pld.rank",
                        "pld.system.nranks": "pld.nranks"}


def get_op(name: str) -> OpDef:
    _ensure_loaded()
    op = _REGISTRY.get(name) or _REGISTRY.get(_REFERENCE_SPELLINGS.get(name, ""))
    if op is None:
        raise TypeCheckError(f"unknown op '{name}'", hint=_suggest(name))
    return op


def has_op(name: str) -> bool:
    _ensure_loaded()
    return name in _REGISTRY


def all_ops() -> dict[str, OpDef]:
    """Every op of the language (the test-only ops of testing.py are left out: get_op still finds them)."""
    _ensure_loaded()
    return {name: op for name, op in _REGISTRY.items() if not name.startswith(TEST_PREFIX)}


def op_count() -> int:
    """How many ops are registered (cheap: lets callers cache what they derive from all_ops())."""
    _ensure_loaded()
    return len(_REGISTRY)


def _suggest(name: str) -> str:
    import difflib
    close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
    return f"did you mean {', '.join(close)}?" if close else ""


_LOADED = False


def _ensure_loaded() -> None:
    """Import every op family module of pypto.ir.ops once (each registers its ops on import),
    so a new family is one new file, with no list to update."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        import importlib
        import pkgutil

        import pypto.ir.ops as package
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.name not in ("registry", "common") and not info.name.startswith("_"):
                importlib.import_module(f"pypto.ir.ops.{info.name}")


def to_arg(value: Any, span: Optional[Span] = None) -> Expr:
    """Normalize a Python value into an op argument (numbers → constants, sequences → MakeTuple)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (list, tuple)):
        return MakeTuple([to_arg(v, span) for v in value], span)
    return const(value, span=span)


def _coerce_kwarg(op: OpDef, key: str, spec: Kwarg, value: Any) -> Any:
    types = spec.type if isinstance(spec.type, tuple) else (spec.type,)
    if value is None and (spec.default is None):
        return None
    for t in types:
        if t is Any:
            return value
        if isinstance(t, type) and issubclass(t, enum.Enum):
            if isinstance(value, t):
                return value
            if isinstance(value, str) and value in t.__members__:
                return t[value]
            if isinstance(value, int) and not isinstance(value, bool):
                try:
                    return t(value)
                except ValueError:
                    pass
            continue
        if t is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if t is int and isinstance(value, bool):
            continue
        if t is list and isinstance(value, (list, tuple)):
            return list(value)
        if isinstance(value, t):
            return value
    names = " or ".join(getattr(t, "__name__", str(t)) for t in types)
    raise TypeCheckError(f"{op.name}: keyword '{key}' expects {names}, got {value!r}")


def create_op_call(name: str, args: Sequence[Any] = (), kwargs: Optional[dict] = None, span: Optional[Span] = None,
                   attrs: Optional[dict] = None) -> Call:
    """Build a Call of a registered op, checking arguments and deducing the result type."""
    op = get_op(name)
    args = tuple(to_arg(a, span) for a in args)
    variadic = bool(op.args) and op.args[-1].startswith("*")
    n_fixed = len(op.args) - (1 if variadic else 0)
    lo = op.min_args if op.min_args is not None else n_fixed
    if len(args) < lo or (not variadic and len(args) > len(op.args)):
        expect = f"{lo}" if lo == len(op.args) else f"{lo} to {len(op.args)}"
        raise TypeCheckError(f"{name} takes {expect} positional argument(s) ({', '.join(op.args)}), got {len(args)}",
                             span)
    given = dict(kwargs or {})
    unknown = [k for k in given if k not in op.kwargs]
    if unknown:
        accepted = ", ".join(op.kwargs) or "none"
        raise TypeCheckError(f"{name} got an unexpected keyword argument '{unknown[0]}'", span,
                             hint=f"accepted keywords: {accepted}")
    full: dict = {}
    for key, spec in op.kwargs.items():
        if key in given:
            full[key] = _coerce_kwarg(op, key, spec, given[key])
        elif spec.required:
            raise TypeCheckError(f"{name} requires the keyword argument '{key}'", span)
        else:
            full[key] = spec.default
    try:
        result_type = op.deduce(args, full) if op.deduce is not None else None
    except PyptoError as e:
        if not e.message.startswith(name):
            e.message = f"{name}: {e.message}"
            e.args = (e._one_line(),)
        raise e.with_span(span)
    return Call(op, args, full, result_type, attrs, span)


def op_kwarg_default(name: str, key: str) -> Any:
    return get_op(name).kwargs[key].default


def dtype_of(e: Expr) -> DataType:
    return e.type.dtype


def memory_of(e: Expr) -> Optional[MemorySpace]:
    return getattr(e.type, "memory_space", None)
