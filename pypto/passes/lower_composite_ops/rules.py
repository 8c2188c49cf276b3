"""The LowerCompositeOps dispatch table: op name → lowering rule (seed 001, "Architecture").

A rule is `rule(call, args, builder) -> Expr`: `call` is the original composite Call, `args`
its operands after the pass's own rewriting (rules must use these, not `call.args`, so the
pass's variable remapping survives), `builder` the LoweringBuilder to append statements to.
It returns the final result expression (a MakeTuple for multi-result ops).

To add a composite op: write `lower_<op>_rule` in the module of its family (one module per
family: trig, select, mx; the distributed collectives each get their own), then add one entry
below. The table is read-only and names every rule explicitly — no self-registration, no import
order to get right. Calls whose op is not in the table are left alone, and no rule emits an op
that is in the table, which is why the pass is idempotent.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, Optional

from pypto.ir.expr import Call, Expr
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_all_to_all_v import lower_all_to_all_v_rule
from pypto.passes.lower_composite_ops.collective_allreduce import lower_allreduce_rule
from pypto.passes.lower_composite_ops.collective_barrier import lower_barrier_rule
from pypto.passes.lower_composite_ops.collective_broadcast import lower_broadcast_rule
from pypto.passes.lower_composite_ops.collective_gather import lower_all_to_all_rule, lower_allgather_rule
from pypto.passes.lower_composite_ops.collective_reduce_scatter import lower_reduce_scatter_rule
from pypto.passes.lower_composite_ops.collective_transfer import lower_tensor_get_rule, lower_tensor_put_rule
from pypto.passes.lower_composite_ops.mx import lower_tquant_mx_rule
from pypto.passes.lower_composite_ops.select import lower_select_rule
from pypto.passes.lower_composite_ops.trig import lower_cos_rule, lower_sin_rule

CompositeLoweringFn = Callable[[Call, tuple, LoweringBuilder], Expr]

RULES: Mapping[str, CompositeLoweringFn] = MappingProxyType({
    "tile.sin": lower_sin_rule,
    "tile.cos": lower_cos_rule,
    # scratch-free select → tile.create (scratch, Vec) + tile.sel / tile.sels, per the backend's plan
    "tile.select": lower_select_rule,
    # packed MX quantization → tile.tquant_mx_raw + tile.tmov_x2zz with explicit Vec workspaces
    "tile.tquant_mx": lower_tquant_mx_rule,
    # InCore pld.tensor.* collectives → notify / wait credit barriers + remote data movement (seed 001)
    "pld.tensor.barrier": lower_barrier_rule,
    "pld.tensor.allreduce": lower_allreduce_rule,
    "pld.tensor.allgather": lower_allgather_rule,
    "pld.tensor.reduce_scatter": lower_reduce_scatter_rule,
    "pld.tensor.broadcast": lower_broadcast_rule,
    "pld.tensor.all_to_all": lower_all_to_all_rule,
    "pld.tensor.all_to_all_v": lower_all_to_all_v_rule,
    # tensor-level one-sided copies → Vec staging tile(s) + chunked pld.tile.put / get
    "pld.tensor.put": lower_tensor_put_rule,
    "pld.tensor.get": lower_tensor_get_rule,
})


def lookup_rule(op_name: str) -> Optional[CompositeLoweringFn]:
    return RULES.get(op_name)
