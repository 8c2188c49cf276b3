"""The host orchestration artifact: an Orchestration function as readable Python task submission.

The reference emits C++ against the PTO2 runtime (`rt_submit_aiv_task(func_id, args)` with
`add_input / add_output / add_inout / add_scalar` per argument); this is the same program
as Python over a small runtime object `rt`, so a reader sees which kernel runs on which core
type with which argument directions:

    def main(rt, x):
        ret0_out = rt.alloc_tensor([64, 64], "FP32")
        y = rt.submit_aiv_task("add_twice", inputs=[x], outputs=[ret0_out])
        return y

`rt` needs: alloc_tensor(shape, dtype), submit_{aiv,aic,mixed,spmd}_task(kernel, inputs=, outputs=,
inouts=, scalars=[, core_num=, sync_start=]) returning the callee's results, and op(name, *args, **kwargs) for
other host ops. It is a 1:1 rendering of the final IR (the directions are the callee's).
"""

from __future__ import annotations

import keyword
import re

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import (BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, Expr, GlobalVar, MakeTuple,
                           TupleGetItem, UnaryExpr, Var)
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt,
                           SeqStmts, WhileStmt, YieldStmt)
from pypto.ir.types import ScalarType

SUBMIT = {FunctionType.AIV: "submit_aiv_task", FunctionType.AIC: "submit_aic_task",
          FunctionType.Group: "submit_mixed_task", FunctionType.Spmd: "submit_spmd_task",
          FunctionType.InCore: "submit_aiv_task"}
_PY_BINARY = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "truediv": "/", "pow": "**",
              "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "and", "or": "or",
              "bitand": "&", "bitor": "|", "bitxor": "^", "shl": "<<", "shr": ">>", "xor": "^"}


class _Writer:
    def __init__(self, program: Program, func: Function):
        self.program = program
        self.func = func
        self.lines: list = []
        self.depth = 1
        self.names: dict = {}
        self.taken: set = {"rt"}
        self.pending: list = []

    def name(self, var: Var) -> str:
        n = self.names.get(var)
        if n is None:
            base = re.sub(r"\W", "_", var.name_hint or "v") or "v"
            if base[0].isdigit() or keyword.iskeyword(base):
                base = "v_" + base
            n, k = base, 0
            while n in self.taken:
                k += 1
                n = f"{base}_{k}"
            self.taken.add(n)
            self.names[var] = n
        return n

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    # -------------------------------------------------------------- expressions
    def expr(self, e: Expr) -> str:
        if isinstance(e, Var):
            return self.name(e)
        if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
            return repr(e.value)
        if isinstance(e, MakeTuple):
            return "[" + ", ".join(self.expr(x) for x in e.elements) + "]"
        if isinstance(e, TupleGetItem):
            return f"{self.expr(e.tuple)}[{e.index}]"
        if isinstance(e, BinaryExpr):
            op = _PY_BINARY.get(e.op)
            if op is None:
                return f"{e.op}({self.expr(e.lhs)}, {self.expr(e.rhs)})"
            return f"({self.expr(e.lhs)} {op} {self.expr(e.rhs)})"
        if isinstance(e, UnaryExpr):
            x = self.expr(e.operand)
            return {"neg": f"(-{x})", "not": f"(not {x})", "bitnot": f"(~{x})", "abs": f"abs({x})"}.get(
                e.op, f"rt.cast({x}, {e.dtype.name!r})")
        if isinstance(e, Call):
            return self.call(e)
        raise UnsupportedError(f"orchestration codegen: cannot render a {type(e).__name__}", e.span)

    def call(self, c: Call) -> str:
        if isinstance(c.op, GlobalVar):
            return self.submit(c)
        if c.op.name == "tensor.create":
            return f"rt.alloc_tensor({self.expr(c.args[0])}, {c.kwargs['dtype'].name!r})"
        args = [repr(c.op.name)] + [self.expr(a) for a in c.args]
        args += [f"{k}={_literal(v)}" for k, v in c.kwargs.items() if v is not None]
        return f"rt.op({', '.join(args)})"

    def submit(self, c: Call) -> str:
        callee = self.program.get_function(c.op.name)
        if callee is None:
            raise UnsupportedError(f"orchestration codegen: call of unknown function '{c.op.name}'", c.span)
        method = SUBMIT.get(callee.func_type)
        if method is None:                      # another host function: a plain call
            return f"{_ident(callee.name)}(rt, {', '.join(self.expr(a) for a in c.args)})"
        groups = {"inputs": [], "outputs": [], "inouts": [], "scalars": []}
        for arg, param, d in zip(c.args, callee.params, callee.param_directions):
            if isinstance(param.type, ScalarType):
                groups["scalars"].append(self.expr(arg))
            else:
                key = {ParamDirection.In: "inputs", ParamDirection.Out: "outputs"}.get(d, "inouts")
                groups[key].append(self.expr(arg))
        parts = [repr(callee.name)] + [f"{k}=[{', '.join(v)}]" for k, v in groups.items() if v]
        for key in ("core_num", "sync_start"):
            value = c.attrs.get(key, callee.attrs.get(key))
            if value is not None and value is not False:
                parts.append(f"{key}={_literal(value)}")
        return f"rt.{method}({', '.join(parts)})"

    # -------------------------------------------------------------- statements
    def stmt(self, s) -> None:
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                self.stmt(x)
        elif isinstance(s, AssignStmt):
            self.line(f"{self.name(s.var)} = {self.expr(s.value)}")
        elif isinstance(s, EvalStmt):
            self.line(self.expr(s.expr))
        elif isinstance(s, ReturnStmt):
            self.line("return " + ", ".join(self.expr(v) for v in s.values) if s.values else "return")
        elif isinstance(s, YieldStmt):
            self.pending = list(s.values)
        elif isinstance(s, ForStmt):
            self.loop_for(s)
        elif isinstance(s, IfStmt):
            self.branch(s)
        elif isinstance(s, WhileStmt):
            self.loop_while(s)
        elif isinstance(s, BreakStmt):
            self.line("break")
        elif isinstance(s, ContinueStmt):
            self.line("continue")
        elif isinstance(s, ScopeStmt):
            self.line(f"# {type(s).__name__}")
            self.stmt(s.body)
        else:
            raise UnsupportedError(f"orchestration codegen: statement {type(s).__name__}", s.span)

    def body(self, stmt, targets) -> None:
        self.depth += 1
        start = len(self.lines)
        self.pending = []
        self.stmt(stmt)
        for t, v in zip(targets, self.pending):
            self.line(f"{self.name(t)} = {self.expr(v)}")
        if len(self.lines) == start:
            self.line("pass")
        self.depth -= 1

    def loop_for(self, s: ForStmt) -> None:
        for a in s.iter_args:
            self.line(f"{self.name(a)} = {self.expr(a.init_value)}")
        rng = f"range({self.expr(s.start)}, {self.expr(s.stop)}, {self.expr(s.step)})"
        self.line(f"for {self.name(s.loop_var)} in {rng}:")
        self.body(s.body, s.iter_args)
        for a, r in zip(s.iter_args, s.return_vars):
            self.line(f"{self.name(r)} = {self.name(a)}")

    def loop_while(self, s: WhileStmt) -> None:
        for a in s.iter_args:
            self.line(f"{self.name(a)} = {self.expr(a.init_value)}")
        self.line(f"while {self.expr(s.condition)}:")
        self.body(s.body, s.iter_args)
        for a, r in zip(s.iter_args, s.return_vars):
            self.line(f"{self.name(r)} = {self.name(a)}")

    def branch(self, s: IfStmt) -> None:
        self.line(f"if {self.expr(s.condition)}:")
        self.body(s.then_body, s.return_vars)
        if s.else_body is not None:
            self.line("else:")
            self.body(s.else_body, s.return_vars)


def _ident(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _literal(v) -> str:
    if hasattr(v, "name") and not isinstance(v, (str, int, float)):
        return repr(v.name)
    return repr(v)


def kernel_table(program: Program) -> list:
    """(name, core type and, for a Group / Spmd wrapper, the kernels it launches) in program order."""
    from pypto.ir.visitor import collect
    rows = []
    for f in program.functions.values():
        if f.func_type not in SUBMIT:
            continue
        calls = [c.op.name for c in collect(f.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar))]
        rows.append((f.name, f.func_type.name + (f" = {' + '.join(calls)}" if calls else "")))
    return rows


def generate_orchestration(program: Program, func: Function) -> str:
    """The Python orchestration artifact of one Orchestration function."""
    w = _Writer(program, func)
    params = ", ".join(["rt"] + [w.name(p) for p in func.params])
    w.stmt(func.body)
    dirs = ", ".join(f"{w.name(p)}: {d.name}" for p, d in zip(func.params, func.param_directions))
    kernels = "\n".join(f"#   {name:<32} {kind}" for name, kind in kernel_table(program)) or "#   (none)"
    head = [f'"""Orchestration {func.name!r} of program {program.name!r} (generated by pypto; do not edit).',
            "", f"Parameters: {dirs or '(none)'}.", '"""', "", "# Kernels and their core types:", kernels, "", "",
            f"def {_ident(func.name)}({params}):"]
    return "\n".join(head + (w.lines or ["    pass"])) + "\n"


def generate_all(program: Program) -> dict:
    """{orchestration function name: Python source} for every Orchestration function."""
    return {f.name: generate_orchestration(program, f) for f in program.functions.values()
            if f.func_type is FunctionType.Orchestration}
