"""InlineFunctions: splice `FunctionType.Inline` callees into their callers and remove them.

Requires: — / Produces: InlineFunctionsEliminated / Invalidates: —
Reference: pass doc 01 (compiler-and-runtime.md §2, dump 01).

    before:  y = self.helper(x)            # helper is @pl.function(type=Inline): t = x + x; return t
    after:   t' = pl.add(x, x); y = t'     # callee body alpha-renamed, params bound to the arguments
    (a call's dump_vars move onto the spliced tasks taking those values: pypto/passes/inline_dump_vars.py)
    (an Inline function that reaches itself through calls is rejected as a cycle)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, ConstBool, ConstFloat, ConstInt, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, SeqStmts, Stmt
from pypto.ir.visitor import IRMutator, IRVisitor
from pypto.passes.analysis import alpha_rename, as_seq, body_list
from pypto.passes.base import Pass
from pypto.passes.inline_dump_vars import mark_spliced, marked_values
from pypto.passes.properties import IRProperty, PassProperties


def _inline_call(stmt, call: Call, callee: Function, bind_to) -> list:
    """The callee's statements for one call site; `bind_to` receives the returned value (or None)."""
    pre: list = []
    mapping: dict = {}
    for p, a in zip(callee.params, call.args):
        if isinstance(a, (Var, ConstInt, ConstFloat, ConstBool)):
            mapping[p] = a
        else:
            tmp = Var(p.name_hint, p.type, a.span)
            pre.append(AssignStmt(tmp, a, stmt.span))
            mapping[p] = tmp
    body, renamed = alpha_rename(callee.body, mapping)
    # a parameter the callee re-binds (`out = pl.assemble(out, ...)`) becomes a local that starts as the argument
    rebound = [p for p in callee.params if renamed.get(p) is not mapping[p]]
    pre += [AssignStmt(renamed[p], mapping[p], stmt.span) for p in rebound]
    stmts = body_list(body)
    ret = stmts[-1] if stmts and isinstance(stmts[-1], ReturnStmt) else None
    if ret is not None:
        stmts = stmts[:-1]
    marked = marked_values(call, callee.params, renamed)
    if marked:              # pl.dump_tag at the call: the spliced tasks taking those values dump them
        stmts = mark_spliced(stmts, marked)
    for s in stmts:
        if _contains_return(s):
            raise UnsupportedError(f"InlineFunctions: inline function {callee.name} returns from inside control flow",
                                   s.span, hint="return once, at the end of the inline function")
    if bind_to is not None:
        if ret is None or not ret.values:
            raise ValueCheckError(f"inline function {callee.name} returns nothing, but its result is used", stmt.span)
        value = ret.values[0] if len(ret.values) == 1 else MakeTuple(ret.values, ret.span)
        stmts.append(AssignStmt(bind_to, value, stmt.span))
    return pre + stmts


def _contains_return(s: Stmt) -> bool:
    found = []

    class _R(IRVisitor):
        def visit_return_stmt(self, r):
            found.append(r)

    _R().visit(s)
    return bool(found)


class _Inliner(IRMutator):
    def __init__(self, program: Program, expand):
        self.program = program
        self.expand = expand   # name → callee with its own inline calls already spliced

    def _inline_target(self, e):
        if isinstance(e, Call) and isinstance(e.op, GlobalVar):
            f = self.program.get_function(e.op.name)
            if f is not None and f.func_type is FunctionType.Inline:
                return f
        return None

    def mutate_seq_stmts(self, s: SeqStmts):
        out: list = []
        changed = False
        for x in s.stmts:
            new = self._stmt(x)
            changed |= not (len(new) == 1 and new[0] is x)
            out += new
        return as_seq(out, s.span) if changed else s

    def _stmt(self, x: Stmt) -> list:
        if isinstance(x, AssignStmt) and self._inline_target(x.value) is not None:
            callee = self.expand(x.value.op.name)
            return _inline_call(x, self._args(x.value), callee, x.var)
        if isinstance(x, EvalStmt) and self._inline_target(x.expr) is not None:
            callee = self.expand(x.expr.op.name)
            return _inline_call(x, self._args(x.expr), callee, None)
        return [self.mutate(x)]

    def _args(self, c: Call) -> Call:
        args = tuple(self.mutate(a) for a in c.args)
        return c.replace(args=args) if any(a is not b for a, b in zip(args, c.args)) else c

    def mutate_call(self, c: Call):
        if self._inline_target(c) is not None:
            raise UnsupportedError(f"InlineFunctions: a call of inline function {c.op.name} is nested inside an "
                                   "expression", c.span, hint="assign the inline call's result to a variable first")
        return self.mutate_children(c)


def _run(program: Program) -> Program:
    inline = {n for n, f in program.functions.items() if f.func_type is FunctionType.Inline}
    if not inline:
        return program
    done: dict = {}
    active: list = []

    def expand(name: str) -> Function:
        if name in done:
            return done[name]
        if name in active:
            cycle = " -> ".join(active[active.index(name):] + [name])
            raise ValueCheckError(f"inline functions call each other in a cycle: {cycle}",
                                  program.functions[name].span, hint="inline functions cannot be recursive")
        active.append(name)
        f = program.functions[name]
        f = f.replace(body=_Inliner(program, expand).mutate(_wrap(f.body)))
        active.pop()
        done[name] = f
        return f

    out = []
    for f in program.functions.values():
        if f.func_type is FunctionType.Inline:
            expand(f.name)  # still check cycles in unused inline functions
            continue
        out.append(f.replace(body=_Inliner(program, expand).mutate(_wrap(f.body))))
    return program.with_functions(out)


def _wrap(body: Stmt) -> Stmt:
    return body if isinstance(body, SeqStmts) else SeqStmts([body], body.span)


def inline_functions() -> Pass:
    return Pass("InlineFunctions", _run, PassProperties(produced={IRProperty.InlineFunctionsEliminated}))
