"""Affine forms of index expressions, so a slice's extent `hi - lo` folds to a constant.

`x[0:1, q * 128:(q + 8) * 128]` has the static extent 1024 even though both bounds are symbolic;
the type of the slice (and every tile made from it) must say 1024, or a later reshape or matmul
sees a dynamic dim. A bound is read as `sum(coeff * atom) + const` over Vars and opaque
sub-expressions (the same expression over the same Vars is the same atom); anything else (division, min, ...) is an atom.
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.expr import BinaryExpr, ConstInt, Expr, UnaryExpr, Var


def _atom_key(e):
    """A hashable key equal for the same expression over the same Vars (Vars by identity)."""
    if isinstance(e, Var):
        return ("var", id(e))
    if isinstance(e, ConstInt):
        return ("const", e.value)
    if isinstance(e, BinaryExpr):
        return (e.op, _atom_key(e.lhs), _atom_key(e.rhs))
    if isinstance(e, UnaryExpr):
        return (e.op, _atom_key(e.operand))
    return ("node", id(e))


def _add(form: dict, atom, coeff: int) -> None:
    key = _atom_key(atom)
    form[key] = form.get(key, 0) + coeff


def _affine(e, scale: int, form: dict) -> None:
    """Accumulate scale * e into form (atom keys → coefficient, key 0 the constant)."""
    if isinstance(e, int) and not isinstance(e, bool):
        form[0] = form.get(0, 0) + scale * e
    elif isinstance(e, ConstInt):
        form[0] = form.get(0, 0) + scale * e.value
    elif isinstance(e, BinaryExpr) and e.op in ("add", "sub"):
        _affine(e.lhs, scale, form)
        _affine(e.rhs, scale if e.op == "add" else -scale, form)
    elif isinstance(e, BinaryExpr) and e.op == "mul" and isinstance(e.rhs, ConstInt):
        _affine(e.lhs, scale * e.rhs.value, form)
    elif isinstance(e, BinaryExpr) and e.op == "mul" and isinstance(e.lhs, ConstInt):
        _affine(e.rhs, scale * e.lhs.value, form)
    elif isinstance(e, UnaryExpr) and e.op == "neg":
        _affine(e.operand, -scale, form)
    elif isinstance(e, Expr):
        _add(form, e, scale)
    else:
        raise TypeError(e)


def constant_difference(hi, lo) -> Optional[int]:
    """hi - lo as an int when the symbolic parts cancel, else None."""
    form: dict = {}
    try:
        _affine(hi, 1, form)
        _affine(lo, -1, form)
    except TypeError:
        return None
    if any(c != 0 for k, c in form.items() if not isinstance(k, int)):
        return None
    return form.get(0, 0)
