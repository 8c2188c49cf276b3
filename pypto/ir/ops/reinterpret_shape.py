"""The shape a `reinterpret_view` gives the same bytes under another dtype (tensor and tile forms).

Without `shape=`, the last dim absorbs a width change ([8, 16] FP32 → [8, 32] INT16); with it, any
static shape holding exactly the source's bytes. A width or shape change needs a fully valid source
(a partial valid region has no byte-equivalent in the new shape).
"""

from __future__ import annotations

from math import prod

from pypto.errors import TypeCheckError
from pypto.ir.expr import ConstInt
from pypto.ir.expr import const as to_expr


def _static(dims):
    vals = [d.value if isinstance(d, ConstInt) else None for d in dims]
    return None if None in vals else vals


def reinterpreted_shape(name: str, shape, valid, src_bits: int, dst_bits: int, explicit) -> tuple:
    """(new shape, whether it differs from `shape`)."""
    explicit = getattr(explicit, "elements", explicit)          # a DSL list arrives as a MakeTuple
    src = _static(shape)
    if explicit is None:
        if src_bits == dst_bits:
            return tuple(shape), False
        if src is None or not src:
            raise TypeCheckError(f"{name}: a width-changing reinterpretation needs a static last dim, got "
                                 f"{[str(d) for d in shape]}", hint="pass shape=[...] explicitly")
        if (src[-1] * src_bits) % dst_bits:
            raise TypeCheckError(f"{name}: the last dim {src[-1]} x {src_bits} bits is not a whole number of "
                                 f"{dst_bits}-bit elements", hint="pass a byte-equivalent shape=[...]")
        new = src[:-1] + [src[-1] * src_bits // dst_bits]
    else:
        new = _static([to_expr(d) for d in explicit])
        if new is None or src is None:
            raise TypeCheckError(f"{name}: shape= needs static dims on both sides")
        if prod(new) * dst_bits != prod(src) * src_bits:
            raise TypeCheckError(f"{name}: shape={new} holds {prod(new) * dst_bits // 8} bytes, the source "
                                 f"{src} holds {prod(src) * src_bits // 8}",
                                 hint="give a shape with the same number of bytes")
        if new == src and src_bits == dst_bits:
            return tuple(shape), False
    if valid is not None and _static(valid) != src:
        raise TypeCheckError(f"{name}: a source with a partial valid region cannot change width or shape",
                             hint="reinterpret a fully valid tensor or tile")
    return tuple(to_expr(d) for d in new), True
