"""The DSL op layer: `pl.<path>(...)` → an IR expression (docs/internals.md §3).

    build_call("add", [tile_a, tile_b], {}, span)      → Call tile.add
    build_call("add", [tensor_a, ConstFloat(1.0)], {})  → Call tensor.adds
    build_call("min", [i, ConstInt(4)], {})             → BinaryExpr min
    build_call("load", [t, [0, 0], [64, 64]], {})       → Call tile.load (valid_shapes = shapes)

Unified names dispatch on the first operand: a Tensor selects `tensor.<op>`, a Tile
`tile.<op>`; a scalar rhs selects the `<op>s` form; all-scalar operands give scalar
arithmetic. Explicit `tile.<op>` / `tensor.<op>` paths name the op directly.
"""

from __future__ import annotations

import difflib
from typing import Any, Optional

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Expr, const
from pypto.ir.ops.common import describe
from pypto.ir.ops.registry import all_ops, create_op_call, get_op, has_op, op_count
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType
from pypto.language.ops.binding import bind, unwrap_const
from pypto.language.ops.scalar import SCALAR_ONLY_PATHS, build_scalar, is_scalar_expr

# DSL names that always mean one op, whatever the operands.
ALIASES = {
    "load": "tile.load", "store": "tile.store", "move": "tile.move", "create_tile": "tile.create",
    "full": "tensor.full", "alloc": "tile.alloc", "create_tensor": "tensor.create", "tensor.create_tensor": "tensor.create",
    "tile.create_tile": "tile.create", "dim": "tensor.dim",
    "create_l1": "tensor.create_l1", "paged_gather": "tensor.paged_gather",
    "arange": "tensor.ci", "tensor.arange": "tensor.ci", "tile.arange": "tile.ci", "random": "tensor.random",
    "tri": "tile.tri", "expand_clone": "tensor.expand_clone", "no_dep": "tensor.no_dep",
    "mgather": "tile.mgather",
    # system ops the reference also spells unqualified
    "reserve_buffer": "system.reserve_buffer", "import_peer_buffer": "system.import_peer_buffer",
    "tfree_to_aic": "system.tfree_to_aic", "tfree_to_aiv": "system.tfree_to_aiv",
    "aic_initialize_pipe": "system.aic_initialize_pipe", "aiv_initialize_pipe": "system.aiv_initialize_pipe",
    # cross-core and block-index ops the reference spells unqualified (no operand to dispatch on)
    "tpush_to_aic": "tile.tpush_to_aic", "tpush_to_aiv": "tile.tpush_to_aiv",
    "tpop_from_aic": "tile.tpop_from_aic", "tpop_from_aiv": "tile.tpop_from_aiv",
    "get_block_idx": "tile.get_block_idx", "get_block_num": "tile.get_block_num",
    "get_subblock_idx": "tile.get_subblock_idx",
}
# Where a popped tile lands when tpop names its type with shape= / dtype= (else the annotation types it).
POP_MEMORY = {"tile.tpop_from_aic": MemorySpace.Vec, "tile.tpop_from_aiv": MemorySpace.Mat}


def _mrgsort_form(args: list, kwargs: dict) -> tuple:
    """block_len= → format1 (runs inside one operand); else format2 (2..4 operands, a tmp= scratch tile last)."""
    if "block_len" in kwargs:
        return "mrgsort_format1", [*args, kwargs.pop("block_len")]
    if "tmp" in kwargs:
        args = [*args, kwargs.pop("tmp")]
    return "mrgsort_format2", args


def _gather_form(args: list, kwargs: dict) -> tuple:
    return ("gather_mask" if "mask_pattern" in kwargs else "gather"), args


def _scatter_form(args: list, kwargs: dict) -> tuple:
    return ("scatter_mask" if "mask_pattern" in kwargs else "scatter"), args


def _array_form(path: str, args: list, kwargs: dict) -> tuple:
    """pl.array.*: an on-core array is a 1-D Vec tile; its elements are read and written as tile elements."""
    short = path.split(".", 1)[1]
    if short == "create":
        extent = args[0] if args else kwargs.pop("extent")
        dtype = args[1] if len(args) > 1 else kwargs.pop("dtype", None)
        return "tile.create", [[extent]], {**kwargs, "dtype": dtype}
    if short == "get_element":
        return "tile.read", [args[0], [args[1]]], kwargs
    return "tile.write", [args[0], [args[1]], args[2]], kwargs


ARRAY_PATHS = ("array.create", "array.get_element", "array.update_element")
# Catalog names this project does not build yet: the DSL knows them and says so when one is called.
NOT_BUILT: dict = {}


# DSL names that stand for one of several ops, chosen by the arguments (then by the operand's family).
FORMS = {"mrgsort": _mrgsort_form, "gather": _gather_form, "scatter": _scatter_form}
# Name of the scalar-rhs form where it is not simply "<op>s".
SCALAR_FORM = {"cmp": "cmps", "and_": "ands", "or_": "ors", "xor": "xors"}
# Ops whose operands commute, so a scalar lhs can move to the rhs (2 * t == t * 2).
COMMUTATIVE = {"add", "mul", "maximum", "minimum", "max", "min"}
# pl.max / pl.min on tiles or tensors are the elementwise maximum / minimum.
SHAPED_SYNONYMS = {"max": "maximum", "min": "minimum"}
_FAMILIES = ("tile", "tensor")


_UNIFIED_CACHE: dict = {}


def _unified_names() -> frozenset:
    """Short names of every tile.* / tensor.* op (recomputed only when more ops get registered)."""
    count = op_count()
    names = _UNIFIED_CACHE.get(count)
    if names is None:
        _UNIFIED_CACHE.clear()
        names = _UNIFIED_CACHE[count] = frozenset(op.short_name for op in all_ops().values()
                                                  if op.category in _FAMILIES)
    return names


def dsl_op_paths() -> frozenset:
    """Every accepted `pl.<path>` op spelling (registered ops may grow, so computed on demand)."""
    return (frozenset(all_ops()) | _unified_names() | frozenset(ALIASES) | SCALAR_ONLY_PATHS | {"cast", "const", "abs"}
            | frozenset(FORMS) | {f"{fam}.{n}" for fam in _FAMILIES for n in FORMS} | frozenset(ARRAY_PATHS)
            | frozenset(NOT_BUILT)
            | {f"{fam}.{n}" for fam in _FAMILIES for n in SHAPED_SYNONYMS})


def is_dsl_op(path: str) -> bool:
    path = _strip(path)
    family, _, short = path.rpartition(".")
    return path in ALIASES or path in SCALAR_ONLY_PATHS or path in ("const", "cast") or has_op(path) \
        or path in _unified_names() or (family in _FAMILIES and short in SHAPED_SYNONYMS) \
        or (family in ("", *_FAMILIES) and short in FORMS) or path in ARRAY_PATHS or path in NOT_BUILT


def _strip(path: str) -> str:
    return path[3:] if path.startswith("pl.") else path


def _kind(e: Any) -> Optional[str]:
    t = getattr(e, "type", None)
    if isinstance(t, TileType):
        return "tile"
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, ScalarType):
        return "scalar"
    return None


def _normalize(args) -> list:
    """Python numbers become constants; other values (lists, dtypes, enums) pass through."""
    return [const(a) if isinstance(a, (bool, int, float)) else a for a in args]


def build_call(path: str, args, kwargs: Optional[dict] = None, span: Optional[Span] = None) -> Expr:
    path = _strip(path)
    display = path if path.startswith("pld.") else f"pl.{path}"       # as the user spelled it
    args = _normalize(args)
    kwargs = dict(kwargs or {})
    if path == "const":
        return _build_const(args, kwargs, span)
    if path in ALIASES:
        return _call(ALIASES[path], display, args, kwargs, span)
    family, _, short = path.rpartition(".")
    if path in NOT_BUILT:
        raise UnsupportedError(f"{display} is not supported yet: {NOT_BUILT[path]} is not built", span,
                               hint="dispatch kernels by calling them from the orchestration function")
    if path in ARRAY_PATHS:
        name, args, kwargs = _array_form(path, list(args), kwargs)
        return _call(name, display, args, kwargs, span)
    if short in FORMS and family in ("", *_FAMILIES):
        short, args = FORMS[short](list(args), kwargs)
        first = args[0] if args else None
        path = f"{family or _kind(first) or 'tensor'}.{short}"
        return _call(path, display, args, kwargs, span)
    if family and family not in _FAMILIES:
        if has_op(path):
            return _call(path, display, args, kwargs, span)
        raise _unknown(path, span)
    first = args[0] if args else next((v for v in kwargs.values() if isinstance(v, Expr)), None)
    kind = _kind(first)
    if family and not has_op(path) and short not in SHAPED_SYNONYMS:
        raise _unknown(path, span)
    if not family or short in SHAPED_SYNONYMS:
        # pl.min / pl.tile.max and friends: scalar arithmetic on scalars, elementwise on tiles / tensors
        scalar = build_scalar(short, args, kwargs, span)
        if scalar is not None:
            return scalar
        if short in SCALAR_ONLY_PATHS and short not in SHAPED_SYNONYMS:
            raise TypeCheckError(f"{display} takes scalar operands, got {describe(getattr(first, 'type', None))}", span)
        short = SHAPED_SYNONYMS.get(short, short)
        if short not in _unified_names():
            raise _unknown(path, span)
    if kind == "scalar" and len(args) >= 2 and short in COMMUTATIVE and _kind(args[1]) in _FAMILIES:
        args = [args[1], args[0], *args[2:]]
        first = args[0]
        kind = _kind(first)
    if kind not in _FAMILIES:
        if family:
            return _call(path, display, args, kwargs, span)   # let the op's type rule name the argument
        first_type = getattr(first, "type", None)
        raise TypeCheckError(f"{display}: the first operand must be a Tensor or a Tile, got "
                             f"{describe(first_type) if first is not None else 'nothing'}", span,
                             hint="unpack the results first: a, b = ..." if isinstance(first_type, TupleType) else
                             "scalar arithmetic uses + - * / and pl.min / pl.max / pl.cast / pl.abs")
    fam = family or kind
    if len(args) >= 2 and is_scalar_expr(args[1]):
        s_form = f"{fam}.{SCALAR_FORM.get(short, short + 's')}"
        if has_op(s_form) and _rhs_is_shaped(f"{fam}.{short}"):
            return _call(s_form, display, args, kwargs, span)
    name = f"{fam}.{short}"
    if not has_op(name):
        other = "tile" if fam == "tensor" else "tensor"
        hint = f"pl.{short} exists for {other}s only" if has_op(f"{other}.{short}") else ""
        raise TypeCheckError(f"{display}: no {fam} form of '{short}' for a {describe(first.type)} operand", span,
                             hint=hint)
    return _call(name, display, args, kwargs, span)


def _rhs_is_shaped(name: str) -> bool:
    """Whether the op's second argument is a tile/tensor (so a scalar there means the *s form)."""
    return has_op(name) and len(get_op(name).args) >= 2 and get_op(name).args[1] in ("rhs",)


def _call(name: str, display: str, args: list, kwargs: dict, span: Optional[Span]) -> Expr:
    op = get_op(name)
    out_dtype = kwargs.pop("out_dtype", None) if name.startswith("tile.matmul") else None
    if name.startswith("tile.matmul") and not name.startswith("tile.matmul_mx"):
        args = _transposed_operands(op, display, args, kwargs, span)
    popped = (kwargs.pop("shape", None), kwargs.pop("dtype", None)) if name in POP_MEMORY else (None, None)
    ordered, ir_kwargs = bind(op, display, args, kwargs, span)
    call = create_op_call(name, ordered, ir_kwargs, span)
    if popped != (None, None):
        call = call.replace(type=_popped_type(display, name, *popped, span))
    if out_dtype is not None and out_dtype is not call.type.dtype:
        # the cube unit's accumulator dtype is fixed; convert afterwards instead
        raise TypeCheckError(f"{display}: out_dtype={out_dtype!r} but a tile matmul of these operands produces "
                             f"{call.type.dtype!r}", span, hint="leave out_dtype unset and pl.cast the result")
    return call


def _transposed_operands(op, display: str, args: list, kwargs: dict, span: Optional[Span]) -> list:
    """`a_trans=True` / `b_trans=True` on a tile matmul: the operand becomes its transpose_view (the
    zero-copy NZ <-> ZN dual), which only a tile still in Mat (or of undecided space) has; the
    compiler then moves it to Left / Right as for any Mat operand."""
    args = list(args)
    for flag, arg in (("a_trans", "lhs"), ("b_trans", "rhs")):
        value = unwrap_const(kwargs.pop(flag, False))
        if not value:
            continue
        k = op.args.index(arg)
        if k >= len(args):
            raise TypeCheckError(f"{display}: {flag}=True needs the '{arg}' operand", span)
        t = getattr(args[k], "type", None)
        space = getattr(t, "memory_space", None)
        if not isinstance(t, TileType) or space not in (None, MemorySpace.Mat):
            raise UnsupportedError(f"{display}: {flag}=True transposes a tile in Mat, but '{arg}' is "
                                   f"{describe(t)}", span, hint="pass the Mat tile (before its move to "
                                                                "Left / Right), or pl.tile.transpose_view it yourself")
        args[k] = create_op_call("tile.transpose_view", [args[k]], {}, span)
    return args


def _popped_type(display: str, name: str, shape, dtype, span: Optional[Span]) -> TileType:
    shape = unwrap_const(shape)
    if shape is None or dtype is None or not isinstance(dtype, DataType) or not isinstance(shape, list) \
            or not all(isinstance(d, int) for d in shape):
        raise TypeCheckError(f"{display}: shape= and dtype= name the popped tile together (a list of integers and "
                             f"a dtype), got shape={shape!r}, dtype={dtype!r}", span,
                             hint="or leave both out and annotate the assignment with pl.Tile[...]")
    return TileType(shape, dtype, memory_space=POP_MEMORY[name])


def _build_const(args: list, kwargs: dict, span: Optional[Span]) -> Expr:
    if not args:
        raise TypeCheckError("pl.const: missing argument 'value'", span)
    dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
    value = unwrap_const(args[0])
    if isinstance(value, Expr):
        raise TypeCheckError("pl.const: argument 'value' must be a number literal", span)
    if dtype is not None and not isinstance(dtype, DataType):
        raise TypeCheckError(f"pl.const: argument 'dtype' must be a dtype such as pl.INT32, got {dtype!r}", span)
    if isinstance(value, float) and dtype is not None and not dtype.is_float():
        raise TypeCheckError(f"pl.const: {value!r} is not an integer but dtype is {dtype.name}", span)
    return const(value, dtype, span)


def _unknown(path: str, span: Optional[Span]) -> TypeCheckError:
    close = difflib.get_close_matches(path, sorted(dsl_op_paths()), n=3)
    hint = f"did you mean {', '.join('pl.' + c for c in close)}?" if close else ""
    return TypeCheckError(f"unknown op 'pl.{path}'", span, hint=hint)
