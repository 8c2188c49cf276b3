"""StampTfreeSplit: each tfree carries the split code and pipe id of the tpop whose tile it frees.

Requires: MixedKernelExpanded / Produces: — / Invalidates: —
Reference: pass doc 24 (compiler-and-runtime.md §2, dump 25). SplitVectorKernel gives a split
kernel's tpops their codes; a free of a split slot must say so too (in split mode the slot is
released only when both lanes freed it).

    before:  z = tpop_from_aic(split=1);  ...;  tfree_to_aic(z, split=0)
    after:   z = tpop_from_aic(split=1);  ...;  tfree_to_aic(z, split=1)
"""

from __future__ import annotations

from pypto.ir.expr import GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt
from pypto.ir.visitor import IRMutator, collect_statements
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties

_POPS = ("tile.tpop_from_aic", "tile.tpop_from_aiv")
_FREES = ("system.tfree_to_aic", "system.tfree_to_aiv")


class _Stamp(IRMutator):
    def __init__(self, pops: dict):
        self.pops = pops

    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c.op, GlobalVar) or c.op.name not in _FREES or not c.args or c.args[0] not in self.pops:
            return c
        pop = self.pops[c.args[0]]
        kwargs = {**c.kwargs, "split": pop.kwargs.get("split", 0), "id": pop.kwargs.get("id")}
        return c if kwargs == c.kwargs else c.replace(kwargs=kwargs)


def _run(func: Function, program: Program) -> Function:
    pops = {s.var: s.value for s in collect_statements(func.body, lambda n: isinstance(n, AssignStmt))
            if getattr(getattr(s.value, "op", None), "name", "") in _POPS}
    if not pops:
        return func
    body = _Stamp(pops).mutate(func.body)
    return func if body is func.body else func.replace(body=body)


def stamp_tfree_split():
    return function_pass("StampTfreeSplit", _run, PassProperties(required={IRProperty.MixedKernelExpanded}))
