"""Binding a DSL call's arguments to an op's declared signature.

The DSL lets users pass any op parameter positionally or by keyword, in the reference's
spelling (`pl.cast(x, pl.FP16)`, `pl.load(t, offs, shapes, valid_shape=...)`,
`pl.row_sum(x, tmp_tile=t)`). The IR wants the op's positional args in order and its
kwargs as plain Python values. `bind` does that translation and fills the DSL defaults.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.enums import AtomicType, PadValue
from pypto.ir.expr import ConstBool, ConstFloat, ConstInt, MakeTuple, UnaryExpr
from pypto.ir.ops.registry import OpDef
from pypto.ir.span import Span
from pypto.ir.types import ScalarType

# reference keyword spelling → our parameter name, per op short name ("*": every op)
RENAMES = {
    "*": {"tmp_tile": "tmp", "tmp": "tmp"},
    "load": {"valid_shape": "valid_shapes", "offset": "offsets", "shape": "shapes"},
    "store": {"offset": "offsets", "output": "output_tensor"},
    "read": {"offset": "indices", "offsets": "indices", "index": "indices"},
    "write": {"offset": "indices", "offsets": "indices", "index": "indices"},
    "slice": {"offsets": "offset", "shapes": "shape", "valid_shapes": "valid_shape"},
    "assemble": {"offsets": "offset"},
    "transpose": {"tmp_tile": "tmp"},
    "cast": {"dtype": "target_type"},
    "fillpad": {"value": "x"},
}
# The reference names an op's first operand after its kind; ours are named after their role.
FIRST_OPERAND_NAMES = ("tile", "tensor", "input")
# and its broadcast vectors after their orientation
VEC_NAMES = ("row_vec", "col_vec")

# Reference keywords we accept only at their default value (the feature is not built).
DSL_ONLY_DEFAULTS = {
    "manual_dep": False, "init_value": None, "clamp": False, "high_precision": False, "drop_dims": None,
    "transpose": None, "atomic": AtomicType.None_, "shapes": None, "flat_layout": None, "pinned": False,
    "a_trans": False, "b_trans": False, "c_matrix_nz": False, "init_cond": None,
}
# slice's pad_value keyword is DSL-only too (fillpad has a real pad_value kwarg)
_SLICE_ONLY = {"pad_value": None}

# Operands that are keyword-only in the DSL although positional in the IR (gather_row's 6th
# positional argument is `transpose`; valid_shape may be a runtime value, so the IR keeps it an operand).
KEYWORD_ONLY = {"gather_row": ("valid_shape",), "load": ("tile_shape",)}   # load: the reference's 5th is target_memory

# Helpful hints when a required positional argument is missing.
MISSING_HINTS = {
    "tmp": "the tile reductions need a scratch tile of x's shape: tmp = pl.create_tile(shape, dtype=...)",
}


def unwrap_const(v: Any) -> Any:
    """A compile-time constant Expr as its Python value (kwargs are plain values in the IR)."""
    if isinstance(v, (ConstInt, ConstFloat, ConstBool)):
        return v.value
    if isinstance(v, UnaryExpr) and v.op == "neg" and isinstance(v.operand, (ConstInt, ConstFloat)):
        return -v.operand.value
    if isinstance(v, MakeTuple):
        return [unwrap_const(x) for x in v.elements]
    if isinstance(v, (list, tuple)):
        return [unwrap_const(x) for x in v]
    return v


def _drop_dsl_only(op: OpDef, display: str, kwargs: dict, span: Optional[Span]) -> None:
    table = dict(DSL_ONLY_DEFAULTS)
    if op.short_name == "slice":
        table.update(_SLICE_ONLY)
    for key in list(kwargs):
        if key in op.kwargs or key in op.args or key not in table:
            continue
        value = unwrap_const(kwargs.pop(key))
        default = table[key]
        at_default = value == default or (default is None and value is False) or (
            key == "atomic" and value in (None, "None_", 0))
        if not at_default:
            raise UnsupportedError(f"{display}: keyword '{key}={value!r}' is not supported yet", span,
                                   hint=f"leave '{key}' at its default ({default!r})")


def bind(op: OpDef, display: str, args: list, kwargs: dict, span: Optional[Span]) -> tuple[list, dict]:
    """Map DSL positional / keyword arguments onto op.args (in order) and op.kwargs (Python values)."""
    kwargs = _rename(op, kwargs)
    _drop_dsl_only(op, display, kwargs, span)
    params = [a for a in op.args if not a.startswith("*")]
    positional = [a for a in params if a not in KEYWORD_ONLY.get(op.short_name, ())]
    if len(positional) < len(params) and len(args) > len(positional) and isinstance(args[len(positional)], MakeTuple):
        positional = params       # a list in that slot is the operand (the printed IR form), never a bool flag
    values, rest = _place(op, display, positional, list(args), kwargs, span)
    values.update({a: kwargs.pop(a) for a in params if a not in positional and a in kwargs})
    _fill_defaults(op, values)
    _one_index_as_list(op, values, span)
    _pad_from_number(op, display, kwargs, span)
    ordered = []
    for name in params:
        if values.get(name) is None:
            break
        ordered.append(values[name])
    gap = [n for n in params[len(ordered):] if values.get(n) is not None]
    lo = op.min_args if op.min_args is not None else len(params)
    if len(ordered) < lo or gap:
        name = params[len(ordered)]
        raise TypeCheckError(f"{display}: missing argument '{name}'", span,
                             hint=MISSING_HINTS.get(name, f"parameters: {', '.join(params)}"))
    return ordered + rest, {k: unwrap_const(v) for k, v in kwargs.items()}


def _rename(op: OpDef, kwargs: dict) -> dict:
    """Reference keyword spellings → this op's parameter names (unknown keys pass through)."""
    renames = {**RENAMES["*"], **RENAMES.get(op.short_name, {})}
    if op.args:
        renames.update({k: op.args[0] for k in FIRST_OPERAND_NAMES if k not in op.args})
    if "vec" in op.args:
        renames.update({k: "vec" for k in VEC_NAMES})
    known = set(op.args) | set(op.kwargs)
    return {renames[k] if renames.get(k) in known else k: v for k, v in kwargs.items()}


def _place(op: OpDef, display: str, params: list, args: list, kwargs: dict, span) -> tuple[dict, list]:
    """Positional values by parameter name; extra positionals fill the op's kwargs in declaration order
    (kept as trailing args for a variadic op). Keywords naming a positional parameter move over."""
    values = dict(zip(params, args))
    rest = args[len(params):]
    if rest and not (op.args and op.args[-1].startswith("*")):
        kw_names = list(op.kwargs)
        if len(rest) > len(kw_names):
            raise TypeCheckError(f"{display} takes at most {len(params) + len(kw_names)} arguments, got {len(args)}",
                                 span, hint=f"parameters: {', '.join(params + kw_names)}")
        for name, v in zip(kw_names, rest):
            if name in kwargs:
                raise TypeCheckError(f"{display} got multiple values for argument '{name}'", span)
            kwargs[name] = v
        rest = []
    for name in params:
        if name in kwargs:
            if name in values:
                raise TypeCheckError(f"{display} got multiple values for argument '{name}'", span)
            values[name] = kwargs.pop(name)
    return values, rest


def _pad_from_number(op: OpDef, display: str, kwargs: dict, span: Optional[Span]) -> None:
    """The reference also spells fillpad's pad value as a number: 0 → zero, ±inf → max / min."""
    v = unwrap_const(kwargs.get("pad_value"))
    if op.short_name != "fillpad" or isinstance(v, (PadValue, str)) or v is None:
        return
    table = {0: PadValue.zero, math.inf: PadValue.max, -math.inf: PadValue.min}
    if not isinstance(v, (int, float)) or v not in table:
        raise UnsupportedError(f"{display}: pad_value={v!r} is not supported; the hardware pads with zero, +inf or -inf",
                               span, hint="use pl.PadValue.zero / max / min")
    kwargs["pad_value"] = table[v]


def _one_index_as_list(op: OpDef, values: dict, span: Optional[Span]) -> None:
    """`pl.read(t, i)` on a 1-D tensor: a bare scalar index is the one-element index list."""
    idx = values.get("indices")
    if op.short_name in ("read", "write") and idx is not None and not isinstance(idx, (MakeTuple, list, tuple)) \
            and isinstance(getattr(idx, "type", None), ScalarType):
        values["indices"] = MakeTuple([idx], span)


def _fill_defaults(op: OpDef, values: dict) -> None:
    """DSL defaults that are not IR defaults (the IR form always spells them out)."""
    if op.name == "tile.load" and values.get("valid_shapes") is None and values.get("shapes") is not None:
        values["valid_shapes"] = values["shapes"]
    if op.name == "tensor.slice" and values.get("drop_dims") is not None and values.get("valid_shape") is None:
        values["valid_shape"] = MakeTuple([])      # [] = no valid shape: drop_dims is the 5th operand
    if op.name in ("system.aic_initialize_pipe", "system.aiv_initialize_pipe") and any(
            values.get(n) is not None for n in ("c2v_consumer_buf", "v2c_consumer_buf")):
        from pypto.ir.dtypes import INT32
        from pypto.ir.expr import const
        for n in ("c2v_consumer_buf", "v2c_consumer_buf"):      # a one-direction pipe names only its buffer
            if values.get(n) is None:
                values[n] = const(0, INT32)
