"""LowerCompositeOps: composite tile ops become sequences of primitive tile ops, so neither the
simulator nor codegen ever meets their high-level form (seed 001, LowerCompositeOps).

Each `var = Call(op, ...)` whose op is in the rule table (pypto/passes/lower_composite_ops/rules.py:
tile.sin, tile.cos, tile.select, tile.tquant_mx) is replaced by the statements its rule builds;
the original target Var stays the left-hand side of the final assignment, temps are named after
it. EvalStmts and composite calls directly inside a ReturnStmt are rewritten the same way (the
latter bound to a fresh Var first). A multi-result rule returns a MakeTuple: the pass records it
for the target (and for plain aliases of the target) and folds every projection `t[i]` to the
element, instead of materialising a tuple value. Everything else is left untouched, so programs
without composite calls come back unchanged, and since no rule emits a composite op the pass is
idempotent. The backend (a2a3 / a5) is `PassContext.current().platform`.

Requires: — / Produces: — / Invalidates: — (the output uses only the existing tile vocabulary)
Runs first among the tile passes: after ConvertTensorToTileOps (tensor.sin → tile.sin) and
before InferTileMemorySpace, which is why the scratch tiles it creates carry target_memory=Vec.

    before:  y = pl.tile.sin(x)
    after:   y__pi_inv_x_tmp_v0 = pl.tile.muls(x, 0.31830987334251404)
             ...  (29 more primitive ops)
             y = pl.tile.mul(y__sign_tmp_v19, y__t_p_tmp_v29)

The package's modules:
    builder.py      LoweringBuilder: per-call statements, primitive op helpers, structured control flow
    rules.py        the read-only op name → rule table
    trig.py         tile.sin / tile.cos (Cody-Waite + Horner)
    select.py       tile.select (packed mask + TSEL / TSELS), scratch.py its backend scratch plans
    mx.py           tile.tquant_mx (packed MX quantization)
    collective_*.py the pld.tensor collectives (allreduce, ring, reduce_scatter, gather, broadcast, ...)
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import PyptoError
from pypto.ir.expr import Call, Expr, MakeTuple, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts
from pypto.ir.visitor import SplicingMutator
from pypto.passes.lower_composite_ops.builder import LoweringBuilder, TempCounter
from pypto.passes.lower_composite_ops.rules import lookup_rule
from pypto.passes.analysis import calls_in
from pypto.passes.base import Pass, function_pass
from pypto.passes.properties import PassProperties


def _composite(e) -> bool:
    return isinstance(e, Call) and not e.is_function_call() and lookup_rule(e.op.name) is not None


class LowerCompositeOpsMutator(SplicingMutator):
    """Statement rewriting, result binding and tuple-alias tracking for one function."""

    def __init__(self) -> None:
        self.counter = TempCounter()
        self.composite_tuples: dict = {}    # target Var (or an alias of it) → the rule's MakeTuple

    # ------------------------------------------------------------------ lowering one call
    def lower(self, call: Call, base_name: str, span: Optional[Span]) -> tuple[list, Expr]:
        """The statements a composite call expands into, and its (unbound) result expression."""
        args = tuple(self.mutate(a) for a in call.args)
        builder = LoweringBuilder(base_name, self.counter, call.span or span)
        try:
            result = lookup_rule(call.op.name)(call, args, builder)
        except PyptoError as e:              # a rule's check (signal shape, ...) names the user's call
            raise e.with_span(call.span or span)
        return builder.take_stmts(), result

    # ------------------------------------------------------------------ statements
    def mutate_assign_stmt(self, s: AssignStmt):
        if _composite(s.value):
            stmts, result = self.lower(s.value, s.var.name_hint, s.span)
            if isinstance(result, MakeTuple):
                self.composite_tuples[s.var] = result
            else:
                stmts.append(AssignStmt(s.var, result, s.span))
            return SeqStmts(stmts, s.span)
        value = self.mutate(s.value)
        if isinstance(s.value, Var) and s.value in self.composite_tuples:
            self.composite_tuples[s.var] = value      # `t2 = t`: an SSA alias of a lowered tuple
            return SeqStmts([], s.span)
        return s if value is s.value else s.replace(value=value)

    def mutate_eval_stmt(self, s: EvalStmt):
        if _composite(s.expr):
            stmts, result = self.lower(s.expr, "eval", s.span)
            if isinstance(result, Call):
                stmts.append(EvalStmt(result, s.span))
            return SeqStmts(stmts, s.span)
        return self.mutate_children(s)

    def mutate_return_stmt(self, s: ReturnStmt):
        if not any(_composite(v) for v in s.values):
            return self.mutate_children(s)
        stmts: list = []
        values = []
        for v in s.values:
            if _composite(v):
                pre, result = self.lower(v, "ret", s.span)
                stmts += pre
                if not isinstance(result, MakeTuple):
                    fresh = Var(f"ret_{self.counter.next()}", result.type, s.span)
                    stmts.append(AssignStmt(fresh, result, s.span))
                    result = fresh
                values.append(result)
            else:
                values.append(self.mutate(v))
        return SeqStmts(stmts + [ReturnStmt(values, s.span)], s.span)

    # ------------------------------------------------------------------ tuple projections
    def mutate_var(self, v: Var):
        return self.composite_tuples.get(v, v)

    def mutate_tuple_get_item(self, e: TupleGetItem):
        if isinstance(e.tuple, Var) and e.tuple in self.composite_tuples:
            return self.composite_tuples[e.tuple].elements[e.index]
        return self.mutate_children(e)


def transform_lower_composite_ops(func: Function, program: Program) -> Function:
    if getattr(func.level, "name", None) == "HOST" or func.func_type.name == "Orchestration":
        return func       # collectives there belong to LowerHostTensorCollectives; no compute op lives there
    if not any(_composite(c) for c in calls_in(func.body)):
        return func       # nothing to lower (the calls under the body are cached: no walk when it is unchanged)
    body = LowerCompositeOpsMutator().mutate(func.body)
    return func if body is func.body else func.replace(body=body)


def lower_composite_ops() -> Pass:
    return function_pass("LowerCompositeOps", transform_lower_composite_ops, PassProperties())
