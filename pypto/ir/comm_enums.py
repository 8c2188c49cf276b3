"""Enumerations of the distributed (`pld`) API: how a signal is deposited, compared and reduced.

They print as their DSL spelling (`pld.NotifyOp.AtomicAdd`), so the printer can emit
`repr(value)` and the parser reads it back through the `pld` namespace.
"""

from __future__ import annotations

from pypto.ir.enums import _PREFIX, _DslEnum


class NotifyOp(_DslEnum):
    AtomicAdd = 0     # add `value` to the peer's INT32 cell (credits accumulate)
    Set = 1           # overwrite the peer's cell (never mix with AtomicAdd on one cell)


class WaitCmp(_DslEnum):
    Eq = 0
    Ge = 1


class ReduceOp(_DslEnum):
    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


_PREFIX[NotifyOp] = "pld.NotifyOp"
_PREFIX[WaitCmp] = "pld.WaitCmp"
_PREFIX[ReduceOp] = "pld.ReduceOp"
