"""The `dump_vars` of an inline call, handed to the tasks InlineFunctions splices in (pypto/language/parser/dump_tags.py).

    pl.dump_tag(h)                          h_out = self.kernel(h, y, attrs={"dump_vars": [h]})
    y = self.helper(h, y,                →  pl.system.task_options([], [], [], [h])
        attrs={"dump_vars": [h]})           with pl.at(level=CORE_GROUP): ...reads h...

A value marked at the call of an Inline function is marked, inside the spliced body, on each kernel
call that takes it (its `dump_vars`) and on each `pl.at` task whose body reads it (the `dumps` of its
task_options, written when it had none). Where the helper rebinds the parameter, the marks stop at
the statement that rebinds it: the new value was never tagged.
"""

from __future__ import annotations

from pypto.ir.expr import Call
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import (ClusterScopeStmt, EvalStmt, HierarchyScopeStmt, InCoreScopeStmt, SeqStmts, SpmdScopeStmt,
                           Stmt)
from pypto.ir.visitor import IRMutator
from pypto.passes.analysis import as_seq_like, defined_vars, used_vars

ATTR = "dump_vars"                                       # the call attr the parser writes (parser/dump_tags.py)
_TASK_SCOPES = (InCoreScopeStmt, HierarchyScopeStmt)   # a pl.at region: one task of the orchestration
_LANE_SCOPES = (ClusterScopeStmt, SpmdScopeStmt)        # regions whose pl.at bodies are lanes of one task


def marked_values(call: Call, params: list, entry: dict) -> list:
    """The callee-side Vars standing for the call's dump_vars: entry[p] for each parameter p whose
    argument is a dumped Var."""
    dumped = call.attrs.get(ATTR) or ()
    return [entry[p] for p, a in zip(params, call.args) if any(a is d for d in dumped) and p in entry]


def mark_spliced(stmts: list, values: list) -> list:
    """The spliced statements with `values` marked on the tasks that consume them, in order; a value
    stops being marked after the statement that rebinds it."""
    live = list(values)
    out: list = []
    for s in stmts:
        if live:
            _Marker(live).place(out, s)
        else:
            out.append(s)
        bound = defined_vars(s)
        live = [v for v in live if not any(v is b for b in bound)]
    return out


def flatten(seq) -> list:
    return list(seq.stmts) if isinstance(seq, SeqStmts) else [seq]


class _Marker(IRMutator):
    def __init__(self, live: list):
        self.live = live

    def _read(self, node) -> list:
        used = used_vars(node)
        return [v for v in self.live if any(v is u for u in used)]

    def mutate_call(self, c: Call):
        c = self.mutate_children(c)
        if not c.is_function_call():
            return c
        new = [v for v in self.live if any(a is v for a in c.args)]
        have = list(c.attrs.get(ATTR) or ())
        add = [v for v in new if not any(v is h for h in have)]
        return c.replace(attrs={**c.attrs, ATTR: have + add}) if add else c

    def mutate_scope_stmt(self, s):
        if isinstance(s, _LANE_SCOPES):
            return s                     # one launch: its lanes carry no options of their own
        return self.mutate_children(s)

    def place(self, out: list, s: Stmt) -> None:
        """Append s to out, marked: a pl.at task reading a live value gets it in its task_options."""
        if isinstance(s, _TASK_SCOPES):
            read = self._read(s.body)
            if read:
                _add_dumps(out, read, s.span)
            out.append(s)
        else:
            out += flatten(self.mutate(s))

    def mutate_seq_stmts(self, seq: SeqStmts):
        out: list = []
        for s in seq.stmts:
            self.place(out, s)
        return as_seq_like(out, seq)


def _is_task_options(s) -> bool:
    return isinstance(s, EvalStmt) and isinstance(s.expr, Call) and not s.expr.is_function_call() \
        and s.expr.op.name == "system.task_options"


def _add_dumps(out: list, read: list, span) -> None:
    """The task_options right before the scope (the last of `out`) with `read` in its dumps."""
    if out and _is_task_options(out[-1]):
        opts = out.pop().expr
        args = [list(getattr(a, "elements", a)) for a in opts.args]
        args[3] += [v for v in read if not any(v is d for d in args[3])]
        kwargs = dict(opts.kwargs)
    else:
        args = [[], [], [], list(read)]
        kwargs = {"pred_op": "", "pred_value": 0, "allow_early_resolve": False}
    out.append(EvalStmt(create_op_call("system.task_options", args, kwargs, span), span))
