"""LoweringBuilder: the per-call statement builder a composite-lowering rule writes into.

A rule appends one AssignStmt per intermediate value with `bind` and returns the final
result expression; the pass binds that result to the user's original target Var and splices
the accumulated statements in place of the composite call (seed 001, "Architecture").

    k = b.bind("k_i", b.cast(b.muls(x, PI_INV), INT32, CastMode.round))
    ...
    return b.mul(sign, t_p)                      # the pass emits `y = tile.mul(sign, t_p)`

Temp names are `<target>__<qualifier>_tmp_v<N>`; N comes from one counter per function,
shared with nested builders (loop / if bodies), so names never collide. Names are cosmetic
(structural equality ignores them); they exist for readable pass dumps.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from pypto.ir.dtypes import INDEX, DataType
from pypto.ir.enums import CastMode
from pypto.ir.expr import Call, ConstFloat, Expr, IterArg, Var, const
from pypto.ir.ops.registry import create_op_call
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, SeqStmts, Stmt, YieldStmt, flatten_to_stmts
from pypto.ir.types import ScalarType


class TempCounter:
    """The mutator-owned counter behind temp names (one per function, shared by nested builders)."""

    def __init__(self) -> None:
        self.value = 0

    def next(self) -> int:
        n = self.value
        self.value += 1
        return n


class LoweringBuilder:
    """Collects the statements one composite call expands into."""

    def __init__(self, base_name: str, counter: TempCounter, span: Optional[Span] = None):
        self.base_name = base_name
        self.counter = counter
        self.span = span
        self.stmts: list[Stmt] = []

    # ------------------------------------------------------------------ binding
    def temp_name(self, qualifier: str) -> str:
        return f"{self.base_name}__{qualifier}_tmp_v{self.counter.next()}"

    def bind(self, qualifier: str, expr: Expr) -> Var:
        """Append `tmp = expr` and return tmp (typed like expr)."""
        var = Var(self.temp_name(qualifier), expr.type, self.span)
        self.stmts.append(AssignStmt(var, expr, self.span))
        return var

    def emit_eval(self, expr: Expr) -> None:
        """Append a side-effecting call whose result nobody reads."""
        self.stmts.append(EvalStmt(expr, self.span))

    def take_stmts(self) -> list[Stmt]:
        out, self.stmts = self.stmts, []
        return out

    # ------------------------------------------------------------------ primitive tile ops
    def op(self, name: str, args: Sequence, kwargs: Optional[dict] = None) -> Call:
        """A primitive op call; type deduction is the op registry's, so shapes / views follow the operands."""
        return create_op_call(name, list(args), kwargs or {}, self.span)

    def muls(self, x: Expr, c: float) -> Call:
        return self.op("tile.muls", [x, ConstFloat(c)])

    def adds(self, x: Expr, c: float) -> Call:
        return self.op("tile.adds", [x, ConstFloat(c)])

    def add(self, a: Expr, b: Expr) -> Call:
        return self.op("tile.add", [a, b])

    def sub(self, a: Expr, b: Expr) -> Call:
        return self.op("tile.sub", [a, b])

    def mul(self, a: Expr, b: Expr) -> Call:
        return self.op("tile.mul", [a, b])

    def cast(self, x: Expr, to: DataType, mode: CastMode) -> Call:
        return self.op("tile.cast", [x], {"target_type": to, "mode": mode})

    # ------------------------------------------------------------------ structured control flow
    def nested(self) -> "LoweringBuilder":
        return LoweringBuilder(self.base_name, self.counter, self.span)

    def _wrap(self, stmts: list) -> Stmt:
        flat = [s for st in stmts for s in flatten_to_stmts(st)]
        return SeqStmts(flat, self.span)

    def _loop_var(self, name: str) -> Var:
        return Var(f"{name}_{self.counter.next()}", ScalarType(INDEX), self.span)

    def emit_for(self, loop_var_name: str, start, stop, step, body_fn: Callable[["LoweringBuilder", Var], None]) -> None:
        """`for i in range(start, stop, step): body` for side effects only."""
        inner = self.nested()
        lv = self._loop_var(loop_var_name)
        body_fn(inner, lv)
        self.stmts.append(ForStmt(lv, const(start), const(stop), const(step), body=self._wrap(inner.take_stmts()),
                                  span=self.span))

    def emit_for_reduce(self, loop_var_name: str, start, stop, step, init_value: Expr,
                        body_fn: Callable[["LoweringBuilder", Var, Var], Expr]) -> Var:
        """A loop with one carried accumulator; body_fn returns the next value. Returns the final value."""
        inner = self.nested()
        lv = self._loop_var(loop_var_name)
        acc = IterArg(self.temp_name("acc"), init_value.type, init_value, self.span)
        nxt = body_fn(inner, lv, acc)
        body = inner.take_stmts() + [YieldStmt([nxt], self.span)]
        result = Var(self.temp_name("acc_out"), init_value.type, self.span)
        self.stmts.append(ForStmt(lv, const(start), const(stop), const(step), iter_args=[acc],
                                  body=self._wrap(body), return_vars=[result], span=self.span))
        return result

    def emit_if(self, cond: Expr, then_fn: Callable[["LoweringBuilder"], None],
                else_fn: Optional[Callable[["LoweringBuilder"], None]] = None) -> None:
        then_b = self.nested()
        then_fn(then_b)
        else_body = None
        if else_fn is not None:
            else_b = self.nested()
            else_fn(else_b)
            else_body = self._wrap(else_b.take_stmts())
        self.stmts.append(IfStmt(cond, self._wrap(then_b.take_stmts()), else_body, span=self.span))

    def emit_if_expr(self, cond: Expr, then_fn: Callable[["LoweringBuilder"], Expr],
                     else_fn: Callable[["LoweringBuilder"], Expr]) -> Var:
        """A value-producing if: both branches yield; returns the Var bound after the if."""
        then_b, else_b = self.nested(), self.nested()
        tv, ev = then_fn(then_b), else_fn(else_b)
        result = Var(self.temp_name("if_out"), tv.type, self.span)
        self.stmts.append(IfStmt(cond, self._wrap(then_b.take_stmts() + [YieldStmt([tv], self.span)]),
                                 self._wrap(else_b.take_stmts() + [YieldStmt([ev], self.span)]),
                                 return_vars=[result], span=self.span))
        return result
