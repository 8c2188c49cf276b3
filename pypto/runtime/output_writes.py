"""A compile-time check the reference also makes: an output written whole twice in a row loses the first write.

    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)      # lost: overwritten on the next line before anything reads it
        result = pl.add(x, 1.0)

Assigning to an Out / InOut parameter writes the whole tensor (`tensor.assemble` at offset 0 of a
value of its full shape). When the very next statement of the same block writes it whole again and
its value does not read the parameter, the first write can never be observed: almost always a typo
or a lost accumulation (`result = pl.add(result, ...)` was meant). The reference rejects such a
kernel at code generation, with PartialCodegenError; so does this check, before the passes run,
pointing at the lost write.
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, ConstInt, MakeTuple, Var
from pypto.ir.function import Program
from pypto.ir.stmt import AssignStmt, SeqStmts
from pypto.ir.visitor import collect


def _whole_write(stmt, outputs: set) -> Optional[Var]:
    """The output parameter `stmt` overwrites entirely (`p = tensor.assemble(p, v, [0, ...])`), else None."""
    if not isinstance(stmt, AssignStmt) or not isinstance(stmt.value, Call):
        return None
    call = stmt.value
    if getattr(call.op, "name", None) != "tensor.assemble" or len(call.args) < 3:
        return None
    target, value, offsets = call.args[0], call.args[1], call.args[2]
    if not (isinstance(target, Var) and target is stmt.var and id(target) in outputs):
        return None
    items = offsets.elements if isinstance(offsets, MakeTuple) else None
    if items is None or not all(isinstance(o, ConstInt) and o.value == 0 for o in items):
        return None
    have, want = getattr(value.type, "shape", None), getattr(target.type, "shape", None)
    if have is None or want is None or len(have) != len(want):
        return None
    if not all(isinstance(a, ConstInt) and isinstance(b, ConstInt) and a.value == b.value for a, b in zip(have, want)):
        return None
    return target


def check_discarded_output_writes(program: Program) -> None:
    """Raise PartialCodegenError at the first whole write of an output that the next statement discards."""
    for func in program.functions.values():
        outputs = {id(p) for p, d in zip(func.params, func.param_directions) if d is not ParamDirection.In}
        if not outputs:
            continue
        for seq in collect(func.body, lambda n: isinstance(n, SeqStmts)):
            for first, second in zip(seq.stmts, seq.stmts[1:]):
                param = _whole_write(first, outputs)
                if param is None or _whole_write(second, outputs) is not param:
                    continue
                if collect(second.value.args[1], lambda n: n is param):
                    continue                   # the second value reads the first: nothing is lost
                from pypto.backend.pto_backend import PartialCodegenError
                raise PartialCodegenError(
                    f"output '{param.name_hint}' of '{func.name}' is written whole here and again on line "
                    f"{second.span.line} before anything reads it, so this write is lost", first.span,
                    hint=f"keep the write you mean, or let the second one use it (e.g. "
                         f"{param.name_hint} = pl.add({param.name_hint}, ...))")
