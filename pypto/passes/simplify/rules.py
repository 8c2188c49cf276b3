"""Local rewrite rules Simplify applies to op calls: a rule is data — the op it matches and a
function returning the replacement expression, or None when the call does not fit — so a new
local fold is one row here (and its test), not a new pass.

    Rule("tile.muls", scalar_identity(1), "x * 1 is x")      # tile.muls(x, 1.0) → x

A replacement must have the call's type (the rules check it). A fold never applies to an operand
whose type carries a MemRef: that tile lives in a buffer the user declared (pl.MemRef), and the
call is how they copy it into another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from pypto.ir.equality import structural_equal
from pypto.ir.expr import Call, ConstFloat, ConstInt, Expr
from pypto.ir.types import ShapedType


@dataclass(frozen=True)
class Rule:
    """`rewrite(call)` → the expression replacing `call`, or None to leave it."""
    op: str
    rewrite: Callable[[Call], Optional[Expr]]
    why: str


def scalar_identity(identity) -> Callable[[Call], Optional[Expr]]:
    """`op(x, c)` → x when the scalar operand c is the constant `identity` (exact for every x:
    x * 1, x / 1 and x - 0 keep NaN, infinities and the sign of zero; x + 0 would not, -0 + 0 = +0)."""

    def rewrite(call: Call) -> Optional[Expr]:
        if len(call.args) != 2 or call.kwargs:
            return None
        x, c = call.args
        if not isinstance(c, (ConstInt, ConstFloat)) or c.value != identity:
            return None
        if not isinstance(x.type, ShapedType) or x.type.memref is not None:
            return None
        return x if structural_equal(x.type, call.type) else None

    return rewrite


# Tile ops only: a tensor-level `y = x` alias of a parameter would reach ConvertTensorToTileOps,
# which needs each tensor a kernel computes with to be loaded or sliced.
RULES = (
    Rule("tile.muls", scalar_identity(1), "x * 1 is x"),
    Rule("tile.divs", scalar_identity(1), "x / 1 is x"),
    Rule("tile.subs", scalar_identity(0), "x - 0 is x"),
)


def rules_by_op(rules=RULES) -> dict:
    table: dict = {}
    for rule in rules:
        table.setdefault(rule.op, []).append(rule)
    return table


_TABLE = rules_by_op()


def apply_rules(call: Call, table: dict = _TABLE) -> Expr:
    """`call` rewritten by the first matching rule of its op, repeatedly, until none applies."""
    expr: Expr = call
    while isinstance(expr, Call) and not expr.is_function_call():
        for rule in table.get(expr.op.name, ()):
            new = rule.rewrite(expr)
            if new is not None:
                expr = new
                break
        else:
            return expr
    return expr
