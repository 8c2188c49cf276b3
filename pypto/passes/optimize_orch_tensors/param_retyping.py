"""Give some parameters of a kernel new tensor types and let the types that flow from them follow.

OptimizeOrchTensors changes kernel parameter types (parent strides, narrowed windows). A
parameter's type reaches further than its own Var: `r = tile.store(t, offs, out)` has out's type,
a loop that carries `out` has iter-args and return vars of that type. This mutator re-deduces
each op call whose operands changed and re-types the Vars that bind the results, so the IR
prints and re-parses to the same program.

    retype_params(k, {2: TensorType([32, 32], FP32, tensor_view=TensorView(stride=[128, 1]))})
"""

from __future__ import annotations

from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TensorType
from pypto.ir.visitor import IRMutator


class _TypeFlow(IRMutator):
    def __init__(self, renamed: dict):
        self.vars = dict(renamed)

    def mutate_var(self, v):
        return self.vars.get(v, v)

    def mutate_iter_arg(self, v):
        if v in self.vars:
            return self.vars[v]
        init = self.mutate(v.init_value)
        t = init.type if isinstance(init.type, TensorType) and isinstance(v.type, TensorType) else v.type
        new = v if init is v.init_value else IterArg(v.name_hint, t, init, v.span)
        self.vars[v] = new
        return new

    def mutate_assign_stmt(self, s):
        value = self.mutate(s.value)
        if value is s.value:
            return s
        if isinstance(value, Call) and not isinstance(value.op, GlobalVar) and isinstance(s.var.type, TensorType):
            value = create_op_call(value.op.name, list(value.args), value.kwargs, value.span, value.attrs or None)
        var = s.var
        if isinstance(var.type, TensorType) and isinstance(value.type, TensorType) and not structural_equal(value.type, var.type):
            var = Var(var.name_hint, value.type, var.span)
            self.vars[s.var] = var
        return AssignStmt(var, value, s.span)

    def _carry_types(self, s):
        new = self.mutate_children(s)
        rvs = []
        for ia, rv in zip(new.iter_args, new.return_vars):
            if isinstance(rv.type, TensorType) and not structural_equal(ia.type, rv.type):
                self.vars[rv] = Var(rv.name_hint, ia.type, rv.span)
            rvs.append(self.vars.get(rv, rv))
        return new.replace(return_vars=tuple(rvs)) if rvs else new

    def mutate_for_stmt(self, s):
        return self._carry_types(s)

    def mutate_while_stmt(self, s):
        return self._carry_types(s)


def retype_uses(body, renamed: dict):
    """`body` with each Var of `renamed` replaced by its (re-typed) new Var and the types that flow from it following."""
    return _TypeFlow(renamed).mutate(body)


def retype_params(func: Function, new_types: dict) -> Function:
    """`func` with params[i] of type new_types[i]; the body's dependent types follow."""
    renamed = {func.params[i]: Var(func.params[i].name_hint, t, func.params[i].span) for i, t in new_types.items()}
    params = tuple(renamed.get(p, p) for p in func.params)
    body = _TypeFlow(renamed).mutate(func.body)
    return func.replace(params=params, body=body)
