"""Sorting ops: 32-element block sort and merge sort of sorted runs (pto.tsort32 / pto.tmrgsort).

The sorted form is a row of interleaved (value, index) pairs, twice as wide as the source:
[v0, i0, v1, i1, ...] in the source's dtype, the index words holding the raw bits of the idx
input's elements. Runs are sorted by value, descending.

    s = pl.sort32(src, idx)                       # [R, C] → [R, 2C]; every 32-element block sorted
    m = pl.mrgsort(s, block_len=64)               # format1: groups of 4 runs of block_len columns merged
    m = pl.mrgsort(a, b, tmp=t)                   # format2: 2..4 sorted lists merged into tmp's shape

`pl.mrgsort` picks the format from its arguments (pypto/language/ops/dispatch.py); the IR names
the two forms `mrgsort_format1` / `mrgsort_format2`, as the reference does.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP16, FP32, INDEX, INT32, UINT32
from pypto.ir.expr import BinaryExpr, ConstInt, as_int
from pypto.ir.ops.common import dims_equal, expect_scalar, expect_shaped, fmt_shape, result_like, same_dtype
from pypto.ir.ops.registry import READ, VECTOR, Kwarg, OpDef, register_op
from pypto.ir.types import TileType

_VALUE_DTYPES = (FP16, FP32)


def _values(name: str, arg: str, e):
    t = expect_shaped(name, arg, e)
    if t.dtype not in _VALUE_DTYPES:
        raise TypeCheckError(f"{name}: argument '{arg}' must be FP16 or FP32, got {t.dtype.name}")
    return t


def _sort32_type(name: str):
    def deduce(args, kw):
        src = _values(name, "src", args[0])
        idx = expect_shaped(name, "idx", args[1])
        if idx.dtype not in (UINT32, INT32) or not dims_equal(idx.shape, src.shape):
            raise TypeCheckError(f"{name}: idx must be a UINT32 / INT32 operand of src's shape {fmt_shape(src.shape)}, "
                                 f"got {fmt_shape(idx.shape)} {idx.dtype.name}")
        cols = as_int(src.shape[-1])
        if cols is not None and cols % 32:
            raise TypeCheckError(f"{name}: the last dim ({cols}) must be a multiple of 32 (whole blocks)")
        last = ConstInt(cols * 2, INDEX) if cols is not None else BinaryExpr("mul", src.shape[-1], ConstInt(2, INDEX))
        return result_like(src, shape=(*src.shape[:-1], last), keep_view=False)
    return deduce


def _format1_type(name: str):
    def deduce(args, kw):
        src = _values(name, "src", args[0])
        bl = expect_scalar(name, "block_len", args[1])
        if not bl.dtype.is_int():
            raise TypeCheckError(f"{name}: block_len must be an integer, got {bl.dtype.name}")
        v = as_int(args[1])
        if v is not None and (v <= 0 or v % 64):
            raise TypeCheckError(f"{name}: block_len must be a positive multiple of 64, got {v}")
        return result_like(src, keep_view=False)
    return deduce


def _format2_type(name: str, with_tmp: bool):
    def deduce(args, kw):
        n_srcs = len(args) - (1 if with_tmp else 0)
        if not 2 <= n_srcs <= 4:
            raise TypeCheckError(f"{name}: merges 2 to 4 sorted lists, got {n_srcs}")
        first = _values(name, "src0", args[0])
        for k in range(1, n_srcs):
            same_dtype(name, first.dtype, _values(name, f"src{k}", args[k]).dtype, f"src0 and src{k}")
        if with_tmp:
            tmp = expect_shaped(name, "tmp", args[-1])
            return TileType(tmp.shape, first.dtype, memory_space=tmp.memory_space)
        total = sum(as_int(expect_shaped(name, "src", a).shape[-1]) or 0 for a in args)
        return result_like(first, shape=(*first.shape[:-1], ConstInt(total, INDEX)), keep_view=False)
    return deduce


_TILE = dict(affinity=VECTOR, output_memory="inherit", not_inplace_safe=True)
register_op(OpDef("tile.sort32", args=("src", "idx"), deduce=_sort32_type("tile.sort32"), effects={0: READ, 1: READ},
                  pto="pto.tsort32", **_TILE, description="sort every 32-element block; (value, index) pairs out"))
register_op(OpDef("tensor.sort32", args=("src", "idx"), deduce=_sort32_type("tensor.sort32"), affinity=VECTOR,
                  lowers_to="tile.sort32", description="sort every 32-element block; (value, index) pairs out"))
register_op(OpDef("tile.mrgsort_format1", args=("src", "block_len"), deduce=_format1_type("tile.mrgsort_format1"),
                  effects={0: READ}, **_TILE, description="merge each group of 4 sorted runs of block_len columns"))
register_op(OpDef("tensor.mrgsort_format1", args=("src", "block_len"),
                  deduce=_format1_type("tensor.mrgsort_format1"), affinity=VECTOR, lowers_to="tile.mrgsort_format1",
                  description="merge each group of 4 sorted runs of block_len columns"))
register_op(OpDef("tile.mrgsort_format2", args=("*srcs",), kwargs={"exhausted": Kwarg(bool, False)},
                  deduce=_format2_type("tile.mrgsort_format2", with_tmp=True), **_TILE,
                  description="merge 2..4 sorted lists (the last operand is the scratch tile fixing the shape)"))
register_op(OpDef("tensor.mrgsort_format2", args=("*srcs",), kwargs={"exhausted": Kwarg(bool, False)},
                  deduce=_format2_type("tensor.mrgsort_format2", with_tmp=False), affinity=VECTOR,
                  description="merge 2..4 sorted lists into one (lowered with a scratch tile)"))
