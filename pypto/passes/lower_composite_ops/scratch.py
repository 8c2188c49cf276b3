"""Backend scratch plans for the select instructions the tile.select rule emits (seed 001, tile.select).

TSEL / TSELS need a scratch tile whose geometry the backend decides; this is the one table of it:

    backend   tile.sel (TSEL)        tile.sels (TSELS)                   dtypes refused
    a2a3      UINT32 [1, 16]         src dtype [1, N] (a full src row)   8-bit ints (both); BF16 (TSELS)
    a5        UINT8  [1, 32]         UINT8 [1, 32]                       BF16 (TSELS)

`plan_op_scratch` returns None when the backend has no form of the op for the source dtype,
so the rule can fall back (TSELS → materialized scalar + TSEL) or report it unsupported.
These plans describe compiler-created scratch only; explicit tile.sel / tile.sels keep the
scratch their caller passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pypto.ir.dtypes import BF16, UINT8, UINT32, DataType


@dataclass(frozen=True)
class ScratchPlan:
    shape: tuple
    dtype: DataType


def _is_8bit_int(dtype: DataType) -> bool:
    return dtype.is_int() and dtype.bits == 8


def select_supports(backend: str, op: str, dtype: DataType) -> bool:
    """The dtype predicate the plans share: whether `op` (tile.sel / tile.sels) exists for `dtype`."""
    if op == "tile.sels" and dtype is BF16:
        return False                       # neither target has a BF16 TSELS (TSEL has)
    if backend == "a2a3" and _is_8bit_int(dtype):
        return False                       # A2/A3 TSEL and TSELS take no 8-bit integers
    return True


def plan_op_scratch(backend: str, op: str, src_dtype: DataType, src_cols: Optional[int] = None) -> Optional[ScratchPlan]:
    """The scratch tile `op` needs on `backend` for a source of src_dtype (and src_cols physical columns)."""
    if not select_supports(backend, op, src_dtype):
        return None
    if backend == "a2a3":
        if op == "tile.sel":
            return ScratchPlan((1, 16), UINT32)
        if src_cols is None:
            return None                    # TSELS scratch is a full source row: needs static columns
        return ScratchPlan((1, src_cols), src_dtype)
    return ScratchPlan((1, 32), UINT8)
