"""The world size of a distributed build, folded into its HOST orchestrator before the pipeline runs.

`pld.world_size()` is a runtime query in the DSL, but a distributed build is for one
DistributedConfig, so on the host it is a constant. Folding it lets a window sized by the world
(`pld.window(buf, [pld.world_size(), 64], ...)`) have a static shape, which the builtin chip
programs of the host collectives (LowerHostTensorCollectives' sub-builds) need. Op calls whose
arguments changed are rebuilt through `create_op_call`, so their result types follow, and a Var
bound to such a value is replaced by one of the new type everywhere after it. Chip functions keep
their dynamic dims (bound per dispatch from the arguments).

    before:  data = pld.window(buf, [pld.world_size(), 64], dtype=pl.FP32)      # [world_size(), 64]
    after:   data = pld.window(buf, [4, 64], dtype=pl.FP32)                     # [4, 64]
"""

from __future__ import annotations

from pypto.ir.dtypes import INDEX
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, Var, const
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt
from pypto.ir.visitor import IRMutator


class _FoldWorldSize(IRMutator):
    def __init__(self, n: int):
        self.n = n
        self.renamed: dict = {}

    def mutate_var(self, v):
        return self.renamed.get(v, v)

    def mutate_call(self, c: Call):
        if not c.is_function_call() and c.op.name == "pld.world_size":
            return const(self.n, INDEX)
        new = self.mutate_children(c)
        if new is c or new.is_function_call():
            return new
        rebuilt = create_op_call(c.op.name, list(new.args), dict(new.kwargs), c.span)
        return rebuilt.replace(attrs=c.attrs) if c.attrs else rebuilt

    def mutate_assign_stmt(self, s: AssignStmt):
        value = self.mutate(s.value)
        if value is s.value:
            return s
        var = s.var
        if not structural_equal(value.type, var.type):
            var = self.renamed[s.var] = Var(var.name_hint, value.type, var.span)
        return AssignStmt(var, value, s.span)


def fold_world_size(host: Function, n: int) -> Function:
    body = _FoldWorldSize(n).mutate(host.body)
    return host if body is host.body else host.replace(body=body)
