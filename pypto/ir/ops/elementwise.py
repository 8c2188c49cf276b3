"""Elementwise, reduction and broadcast ops: one row declares an op completely.

A row registers the tile op and its tensor form (`tensor.X`, which ConvertTensorToTileOps lowers
1:1 to `tile.X`), with the numpy function the simulator applies and the PTO instruction codegen
emits. Nothing else lists these ops: the simulator (pypto/runtime/sim/ops/elementwise.py), the PTO
emitter table (pypto/codegen/pto/tile.py) and the converter registry derive their entries from
the OpDef fields, and `pl.<name>` dispatches to whichever form the operand selects.

    unary("exp", np.exp, "pto.texp", dtypes="float")       # tile.exp + tensor.exp + pl.exp

Adding an op is one row here plus its test (docs/internals.md, "Adding an op").
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP16, FP32, INT32
from pypto.ir.ops.common import (binary_rule, expand_rule, fp32_only_rule, reduce_rule, scalar_binary_rule,
                                 ternary_rule, unary_rule)
from pypto.ir.enums import MemorySpace
from pypto.ir.ops.promoting_binary import promoting_binary_rule
from pypto.ir.ops.registry import READ, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.ops.tile import vector_op


# ---------------------------------------------------------------------------- numeric choices
def int_div(a, b):
    """Division: true division for floats; integers truncate toward zero (C semantics) and x / 0
    gives 0 instead of a trap."""
    if a.dtype.kind in "iu":
        q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)
    return a / b


def prelu(x, slope):
    return np.where(x > 0, x, x * slope)


# ---------------------------------------------------------------------------- precision modes
# div / log / recip take high_precision=True: PTOAS's precise mode (FP16 / FP32 only). None is the
# default mode and is not spelled. The simulator computes correctly rounded results in both modes.
PRECISION_KWARGS = {"high_precision": Kwarg(bool, None)}


def _precise(rule, name: str):
    """`rule`, refusing high_precision=True on a dtype the precise mode has no form for."""
    def deduce(args, kw):
        result = rule(args, kw)
        if kw.get("high_precision") and result.dtype not in (FP16, FP32):
            raise TypeCheckError(f"{name}: high_precision=True needs an FP16 or FP32 result, got {result.dtype.name}",
                                 hint="cast to FP32 first, or drop high_precision")
        return result
    return deduce


def _with_scratch_of_x(rule, name: str):
    """`rule` for an op whose optional second operand is a scratch tile shaped like x (rsqrt's precise form)."""
    def deduce(args, kw):
        if len(args) > 1:
            from pypto.ir.ops.common import expect_tile
            x, tmp = expect_tile(name, "x", args[0]), expect_tile(name, "tmp", args[1])
            if tmp.dtype != x.dtype or len(tmp.shape) != len(x.shape):
                raise TypeCheckError(f"{name}: the scratch tile must have x's dtype and rank ({x.dtype.name}, "
                                     f"rank {len(x.shape)}), got {tmp.dtype.name} rank {len(tmp.shape)}")
        return rule(args[:1], kw)
    return deduce


# ---------------------------------------------------------------------------- row kinds
def _tensor_form(short: str, args: tuple, deduce, description: str, kwargs: Optional[dict] = None) -> None:
    register_op(OpDef(f"tensor.{short}", args=args, deduce=deduce, affinity=VECTOR, lowers_to=f"tile.{short}",
                      description=description, kwargs=dict(kwargs or {})))


def unary(name: str, fn: Optional[Callable], pto: Optional[str], *, dtypes: Optional[str] = None,
          precision: str = "", description: str = "") -> None:
    """tile.<name>(x) / tensor.<name>(x); dtypes "float" / "int" / "fp32" restricts the operand.
    precision "kwarg": both forms take high_precision; "scratch": the tensor form takes it and the
    tile form's precise mode is an optional scratch tile operand (rsqrt)."""
    def rule(op):
        if dtypes == "fp32":
            return fp32_only_rule(op)
        return unary_rule(op, float_only=dtypes == "float", kind=None if dtypes == "float" else dtypes)
    tile_rule, tile_args, extra = rule(f"tile.{name}"), ("x",), {}
    if precision == "kwarg":
        tile_rule, extra = _precise(tile_rule, f"tile.{name}"), {"kwargs": dict(PRECISION_KWARGS)}
    elif precision == "scratch":
        tile_rule, tile_args, extra = _with_scratch_of_x(tile_rule, f"tile.{name}"), ("x", "tmp"), {"min_args": 1}
    vector_op(f"tile.{name}", tile_args, tile_rule, numpy=fn, numpy_form="unary" if fn else None,
              pto=pto, description=description, **extra)
    tensor_rule = _precise(rule(f"tensor.{name}"), f"tensor.{name}") if precision else rule(f"tensor.{name}")
    _tensor_form(name, ("x",), tensor_rule, description, PRECISION_KWARGS if precision else None)


def binary(name: str, fn: Callable, pto: str, scalar: str, scalar_pto: str, *, dtypes: Optional[str] = None,
           args: tuple = ("lhs", "rhs"), tmp: tuple = (), precision: bool = False, description: str = "",
           tensor_rule=None, narrows_scalar: bool = False) -> None:
    """tile.<name>(lhs, rhs) and its scalar-rhs form tile.<scalar>(lhs, s), each with a tensor form.
    `tmp` lists the forms ("binary", "scalar") whose tile op takes a trailing scratch tile;
    `precision`: the two-tile form takes high_precision; `tensor_rule` replaces the binary tensor
    form's rule (tensor.div broadcasts and promotes); `narrows_scalar`: the scalar form takes a float
    scalar on an integer operand, converted to the operand's dtype."""
    def scalar_rule(op, kind):
        return scalar_binary_rule(op, kind, narrows_scalar=narrows_scalar)
    for short, form, op_pto, rule in ((name, "binary", pto, binary_rule), (scalar, "scalar", scalar_pto,
                                                                          scalar_rule)):
        tile_args = args + (("tmp",) if form in tmp else ())
        precise = precision and form == "binary"
        kwargs = dict(PRECISION_KWARGS) if precise else {}

        def checked(op, rule=rule, precise=precise):
            return _precise(rule(op, kind=dtypes), op) if precise else rule(op, kind=dtypes)
        vector_op(f"tile.{short}", tile_args, checked(f"tile.{short}"), n_tiles=2 if form == "binary" else 1,
                  numpy=fn, numpy_form=form, pto=op_pto, description=description, kwargs=kwargs)
        if tensor_rule is not None and form == "binary":
            base = tensor_rule(f"tensor.{short}")
            tensor_deduce = _precise(base, f"tensor.{short}") if precise else base
        else:
            tensor_deduce = checked(f"tensor.{short}")
        _tensor_form(short, args, tensor_deduce, description, kwargs)


def partial(name: str, fn: Callable, pto: str) -> None:
    """Partial (segmented) binary op: over lhs's valid region, fn(lhs, rhs) where rhs is valid too and
    lhs where it is not; the result's valid region is lhs's."""
    vector_op(f"tile.{name}", ("lhs", "rhs"), binary_rule(f"tile.{name}"), n_tiles=2, numpy=fn,
              numpy_form="partial", pto=pto)
    _tensor_form(name, ("lhs", "rhs"), binary_rule(f"tensor.{name}"), "")


def ternary(name: str, fn: Callable, pto: str, *, scalar: bool = False) -> None:
    """tile.<name>(lhs, rhs, rhs2), three operands in one instruction; with scalar=True rhs is a scalar.
    Tile-only, as in the reference."""
    vector_op(f"tile.{name}", ("lhs", "rhs", "rhs2"), ternary_rule(f"tile.{name}", scalar=scalar),
              n_tiles=3, numpy=fn, numpy_form="ternary", pto=pto,
              input_memory={i: (MemorySpace.Vec,) for i in ((0, 2) if scalar else (0, 1, 2))},
              effects={i: READ for i in ((0, 2) if scalar else (0, 1, 2))})


def reduction(name: str, fn: Callable, pto: Optional[str], *, axis: int, tmp: str = "", dtype=None) -> None:
    """row_* (axis=1) / col_* (axis=0) reductions keeping the reduced axis as 1; `tmp` is "required" or
    "optional" when the tile op takes the hardware's scratch tile (the tensor form never does);
    `dtype` is the result dtype when it is not the operand's (the arg* reductions give INT32 indices)."""
    args = ("x", "tmp") if tmp else ("x",)
    vector_op(f"tile.{name}", args, reduce_rule(f"tile.{name}", axis=axis, dtype=dtype), n_tiles=len(args),
              min_args=1 if tmp == "optional" else None, numpy=fn,
              numpy_form="row_reduce" if axis == 1 else "col_reduce", pto=pto)
    _tensor_form(name, ("x",), reduce_rule(f"tensor.{name}", axis=axis, dtype=dtype), "")


def broadcast(name: str, fn: Callable, pto: Optional[str], *, axis: int, pto_operands: Optional[int] = None,
              tmp: bool = True) -> None:
    """row_expand* (vec [..., M, 1], axis=1) / col_expand* (vec [1, N], axis=0) combined with the target.
    The reference lets the fused forms take a scratch tile; the model ignores it."""
    args = ("target", "vec", "tmp") if tmp else ("target", "vec")
    vector_op(f"tile.{name}", args, expand_rule(f"tile.{name}", axis), n_tiles=2, min_args=2 if tmp else None,
              numpy=fn, numpy_form="row_expand" if axis == 1 else "col_expand", pto=pto, pto_operands=pto_operands)
    _tensor_form(name, ("target", "vec"), expand_rule(f"tensor.{name}", axis), "")


# ---------------------------------------------------------------------------- the ops
#      name       numpy        PTO            scalar form  its PTO
binary("add",     np.add,      "pto.tadd",    "adds",      "pto.tadds")
# tsubs keeps the operand's dtype whatever the scalar's: an FP32 scalar on an INT16 tile is narrowed
# to INT16 (as the reference's tensor.subs / tile.subs type it).
binary("sub",     np.subtract, "pto.tsub",    "subs",      "pto.tsubs", narrows_scalar=True)
binary("mul",     np.multiply, "pto.tmul",    "muls",      "pto.tmuls")
binary("div",     int_div,     "pto.tdiv",    "divs",      "pto.tdivs", precision=True,
       tensor_rule=promoting_binary_rule)
binary("maximum", np.maximum,  "pto.tmax",    "maximums",  "pto.tmaxs")
binary("minimum", np.minimum,  "pto.tmin",    "minimums",  "pto.tmins")
# Bitwise ops take integers; the vector unit's xor needs a scratch tile. shr is arithmetic for
# signed dtypes and logical for unsigned (numpy's choice too).
binary("and_",    np.bitwise_and, "pto.tand", "ands",      "pto.tands", dtypes="int")
binary("or_",     np.bitwise_or,  "pto.tor",  "ors",       "pto.tors",  dtypes="int")
binary("xor",     np.bitwise_xor, "pto.txor", "xors",      "pto.txors", dtypes="int", tmp=("binary", "scalar"))
binary("shl",     np.left_shift,  "pto.tshl", "shls",      "pto.tshls", dtypes="int")
binary("shr",     np.right_shift, "pto.tshr", "shrs",      "pto.tshrs", dtypes="int")
# rem: floor remainder, the sign of the divisor (Python's %), needs a scratch tile;
# fmod: truncated remainder, the sign of the dividend (C's fmod).
binary("rem",     np.remainder,   "pto.trem", "rems",      "pto.trems", tmp=("binary", "scalar"),
       description="lhs - floor(lhs / rhs) * rhs elementwise (the sign of rhs)")
binary("fmod",    np.fmod,        "pto.tfmod", "fmods",    "pto.tfmods")
binary("prelu",   prelu,          "pto.tprelu", "lrelu",   "pto.tlrelu", dtypes="float", args=("x", "slope"),
       tmp=("binary",), description="x > 0 ? x : slope * x (slope per element, or a scalar for lrelu)")

#       name    numpy                        PTO          rhs
ternary("addc",  lambda a, b, c: a + b + c,   "pto.taddc")
ternary("subc",  lambda a, b, c: a - b - c,   "pto.tsubc")
ternary("addsc", lambda a, s, c: a + s + c,   "pto.taddsc", scalar=True)
ternary("subsc", lambda a, s, c: a - s - c,   "pto.tsubsc", scalar=True)

#       name        numpy       PTO
partial("part_add", np.add,     "pto.tpartadd")
partial("part_mul", np.multiply, "pto.tpartmul")
partial("part_max", np.maximum, "pto.tpartmax")
partial("part_min", np.minimum, "pto.tpartmin")

#     name     numpy        PTO           operand dtypes
unary("exp",   np.exp,      "pto.texp",   dtypes="float")
unary("log",   np.log,      "pto.tlog",   dtypes="float", precision="kwarg")
unary("sqrt",  np.sqrt,     "pto.tsqrt",  dtypes="float")
unary("rsqrt", lambda x: 1 / np.sqrt(x), "pto.trsqrt", dtypes="float", precision="scratch")
unary("recip", lambda x: 1 / x, "pto.trecip", dtypes="float", precision="kwarg")
unary("neg",   np.negative, "pto.tneg")
unary("abs",   np.abs,      "pto.tabs")
unary("relu",  lambda x: np.maximum(x, 0), "pto.trelu")
unary("not_",  np.invert,   "pto.tnot",   dtypes="int")
# Composite (no instruction): LowerCompositeOps expands them with an FP32 recipe (seed 001), so
# they have neither numpy semantics nor a PTO spelling (sim/ops/composite.py rejects leftovers).
unary("sin",   None,        None,         dtypes="fp32")
unary("cos",   None,        None,         dtypes="fp32")

# The hardware row reductions need a scratch tile (the reference requires it); col_sum may take
# one and has its own emitter (its attribute says which form).
reduction("row_sum",  np.sum,  "pto.trowsum",  axis=1, tmp="required")
reduction("row_max",  np.max,  "pto.trowmax",  axis=1, tmp="required")
reduction("row_min",  np.min,  "pto.trowmin",  axis=1, tmp="required")
reduction("row_prod", np.prod, "pto.trowprod", axis=1, tmp="required")
reduction("col_sum",  np.sum,  None,           axis=0, tmp="optional")
reduction("col_max",  np.max,  "pto.tcolmax",  axis=0)
reduction("col_min",  np.min,  "pto.tcolmin",  axis=0)
reduction("col_prod", np.prod, "pto.tcolprod", axis=0)
# Index of the row's / column's extremum within the valid region, as INT32 (the first one on ties,
# numpy's choice); both forms need the hardware's scratch tile.
reduction("row_argmax", np.argmax, "pto.trowargmax", axis=1, tmp="required", dtype=INT32)
reduction("row_argmin", np.argmin, "pto.trowargmin", axis=1, tmp="required", dtype=INT32)
reduction("col_argmax", np.argmax, "pto.tcolargmax", axis=0, tmp="required", dtype=INT32)
reduction("col_argmin", np.argmin, "pto.tcolargmin", axis=0, tmp="required", dtype=INT32)


def expdif(target, vec):
    return np.exp(target - vec)


def _broadcast_only(target, vec):
    return np.broadcast_to(vec, target.shape)


# The plain expands have their own emitters (the instruction reads only the vector). Only
# row_expand_add passes a given scratch tile on; the others' instructions take (target, vec).
EXPAND_KINDS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": int_div, "max": np.maximum,
                "min": np.minimum, "expdif": expdif}
for _axis, _prefix in ((1, "row_expand"), (0, "col_expand")):
    broadcast(_prefix, _broadcast_only, None, axis=_axis, tmp=False)
    for _kind, _fn in EXPAND_KINDS.items():
        _whole = _prefix == "row_expand" and _kind == "add"
        broadcast(f"{_prefix}_{_kind}", _fn, f"pto.t{_prefix.replace('_', '')}{_kind}", axis=_axis,
                  pto_operands=None if _whole else 2)
