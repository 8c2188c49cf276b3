"""ConvertToSSA: rename re-assigned variables and make control-flow merges explicit.

Requires: — / Produces: SSAForm / Invalidates: NormalizedStmtStructure
Reference: pass doc 04 (compiler-and-runtime.md §2, dump 04); contract in docs/internals.md §1.

The parser binds one Var per Python name and assigns it again on every rebinding. This pass
gives each assignment a fresh Var and builds the merges:
  - if: names assigned in a branch and read later get `return_vars` + a YieldStmt per branch;
  - for / while: names re-assigned in the body and read in a later iteration or after the loop
    become IterArgs (init = the value before the loop), yielded at the body's end, and are
    rebound to the loop's `return_vars` afterwards. A name first assigned in the body and read
    after the loop starts from an Out / InOut parameter of its type (else an earlier value of it).

    before:  x = 0; for i in range(4): x = x + i          (one Var x, assigned twice)
    after:   x = 0; for i, (x_it,) in pl.range(4, init_values=(x,)): x1 = x_it + i; x_rv = pl.yield_(x1)
    SSA input is returned unchanged.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import ParamDirection
from pypto.ir.equality import structural_equal
from pypto.ir.expr import IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (AssignStmt, BreakStmt, ContinueStmt, ForStmt, IfStmt, ReturnStmt, ScopeStmt, SeqStmts,
                           SplitAivScopeStmt, Stmt, WhileStmt, YieldStmt)
from pypto.passes.analysis import (as_seq, as_seq_like, body_list, defined_vars, substitute_type,
                                   substitute_with_types, used_vars)
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties


def _exposed_uses(stmts: list) -> set:
    """Vars a statement list may read before assigning them itself (upward-exposed uses)."""
    live: set = set()
    for s in reversed(stmts):
        live = _exposed(s) | (live - _must_define(s))
    return live


def _exposed(s: Stmt) -> set:
    """Vars one statement may read before (re)binding them; a loop header binds its loop var and iter args."""
    if isinstance(s, AssignStmt):
        return set(used_vars(s.value))
    if isinstance(s, ForStmt):
        head = set().union(*(used_vars(x) for x in (s.start, s.stop, s.step)))
        head |= set().union(*(used_vars(ia.init_value) for ia in s.iter_args)) if s.iter_args else set()
        return head | (_exposed_uses(body_list(s.body)) - {s.loop_var, *s.iter_args})
    if isinstance(s, WhileStmt):
        inits = set().union(*(used_vars(ia.init_value) for ia in s.iter_args)) if s.iter_args else set()
        inner = set(used_vars(s.condition)) | _exposed_uses(body_list(s.body))
        return inits | (inner - set(s.iter_args))
    if isinstance(s, IfStmt):
        branches = _exposed_uses(body_list(s.then_body)) | _exposed_uses(body_list(s.else_body))
        return set(used_vars(s.condition)) | branches
    if isinstance(s, SplitAivScopeStmt):
        return _exposed_uses(body_list(s.body)) - {s.lane_var}
    if isinstance(s, ScopeStmt):
        return _exposed_uses(body_list(s.body)) | (set(used_vars(s.core_num)) if hasattr(s, "core_num") else set())
    return set(used_vars(s))


def _must_define(s: Stmt) -> set:
    """Vars a statement certainly (re)binds: assignments, and those of straight-line scopes."""
    if isinstance(s, AssignStmt):
        return {s.var}
    if isinstance(s, ScopeStmt) and not isinstance(s, SplitAivScopeStmt):
        return _must_define_all(body_list(s.body))
    if isinstance(s, IfStmt):
        # the if's own results, and what both branches bind (a one-armed if binds nothing for sure)
        both = (_must_define_all(body_list(s.then_body)) & _must_define_all(body_list(s.else_body))
                if s.else_body is not None else set())
        return set(s.return_vars) | both
    if isinstance(s, (ForStmt, WhileStmt)):
        return set(s.return_vars)
    return set()


def _must_define_all(stmts: list) -> set:
    return set().union(*(_must_define(x) for x in stmts)) if stmts else set()


def _ends_flow(stmts: list) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ReturnStmt, BreakStmt, ContinueStmt))


class _SSABuilder:
    def __init__(self, func: Function):
        self.func = func
        self.bound: set = set(func.params)
        self.loops: list = []     # per enclosing loop: carried name → its IterArg

    # -- variables ------------------------------------------------------------
    def define(self, var: Var, env: dict) -> Var:
        """The output Var for a new binding of `var` (the same object the first time, unless its type
        names a Var renamed since)."""
        type_ = substitute_type(var.type, env)  # a slice's extent `n - q` names q, maybe renamed
        new = var if var not in self.bound and type_ is var.type else Var(var.name_hint, type_, var.span)
        self.bound.add(new)
        env[var] = new
        return new

    def escaping_init(self, v: Var, env: dict):
        """The value a name first assigned inside a loop (and read after it) starts the loop with, as
        the reference chooses it: an Out / InOut parameter of the same type (`r = pl.store(t, .., out)`
        in the loop, `return r` after it), else the first earlier value of the same type; None if
        there is none."""
        outs = [p for p, d in zip(self.func.params, self.func.param_directions)
                if d in (ParamDirection.Out, ParamDirection.InOut)]
        for key in [*outs, *env]:
            cur = env.get(key)
            if isinstance(cur, Var) and structural_equal(cur.type, v.type):
                return cur
        return None

    def define_iter_arg(self, ia: IterArg, init, env: dict) -> IterArg:
        if ia not in self.bound and init is ia.init_value:
            new = ia
        else:
            new = IterArg(ia.name_hint, ia.type, init, ia.span)
        self.bound.add(new)
        env[ia] = new
        return new

    @staticmethod
    def subst(e, env: dict):
        return substitute_with_types(e, env)

    # -- statements -------------------------------------------------------------
    def seq(self, stmts: list, env: dict, live_after: set) -> list:
        # live_after of statement i: what statements i+1.. (then the code after the list) may read
        # before binding it again
        later = [set(live_after)]
        for s in reversed(stmts[1:]):
            later.append(_exposed(s) | (later[-1] - _must_define(s)))
        later.reverse()
        out: list = []
        for s, live in zip(stmts, later):
            out += self.stmt(s, env, live)
        return out

    def body(self, stmt, env: dict, live_after: set) -> SeqStmts:
        return as_seq_like(self.seq(body_list(stmt), env, live_after), stmt)

    def stmt(self, s: Stmt, env: dict, live_after: set) -> list:
        if isinstance(s, AssignStmt):
            value = self.subst(s.value, env)
            return [s.replace(var=self.define(s.var, env), value=value)]
        if isinstance(s, IfStmt):
            return self.if_stmt(s, env, live_after)
        if isinstance(s, ForStmt):
            return self.loop(s, env, live_after)
        if isinstance(s, WhileStmt):
            return self.loop(s, env, live_after)
        if isinstance(s, SplitAivScopeStmt):
            lane = self.define(s.lane_var, env)
            return [s.replace(lane_var=lane, body=self.body(s.body, env, live_after))]
        if isinstance(s, ScopeStmt):
            # scopes are straight-line code: their assignments stay visible after them
            fields = {"body": self.body(s.body, env, live_after)}
            if hasattr(s, "core_num"):
                fields["core_num"] = self.subst(s.core_num, env)
            return [s.replace(**fields)]
        if isinstance(s, SeqStmts):
            return self.seq(list(s.stmts), env, live_after)
        if isinstance(s, (BreakStmt, ContinueStmt)) and self.loops:
            self.check_loop_exit(s, env)
        return [self.subst(s, env)]

    def check_loop_exit(self, s, env: dict) -> None:
        """A break / continue skips the body's yield, so the carried values must still be the iter args."""
        changed = [v for v, ia in self.loops[-1].items() if env.get(v) is not ia]
        if changed:
            kind = "break" if isinstance(s, BreakStmt) else "continue"
            raise UnsupportedError(f"ConvertToSSA: '{changed[0].name_hint}' is re-assigned before a {kind} in a loop "
                                   "that carries it", s.span,
                                   hint=f"move the {kind} before the assignment, or guard the rest of the body "
                                        "with an if instead")

    def if_stmt(self, s: IfStmt, env: dict, live_after: set) -> list:
        cond = self.subst(s.condition, env)
        before = dict(env)
        env_then, env_else = dict(env), dict(env)
        then_stmts = self.seq(body_list(s.then_body), env_then, live_after)
        else_stmts = self.seq(body_list(s.else_body), env_else, live_after) if s.else_body is not None else []
        then_ends, else_ends = _ends_flow(then_stmts), _ends_flow(else_stmts)
        phis = []
        for var in dict.fromkeys([*env_then, *env_else]):
            if var not in live_after or var in s.return_vars:
                continue
            t, e = env_then.get(var), env_else.get(var)
            if t is before.get(var) and e is before.get(var):
                continue
            if then_ends or else_ends:
                continue
            if t is None or e is None:
                raise UnsupportedError(f"ConvertToSSA: '{var.name_hint}' is assigned in only one branch of an if and "
                                       "read after it", s.span, hint=f"assign '{var.name_hint}' before the if")
            phis.append((var, t, e))
        # a branch that returns / breaks never reaches the merge: the other branch's values flow on
        if then_ends and not else_ends:
            env.update(env_else)
        elif else_ends and not then_ends:
            env.update(env_then)
        if not phis and not s.return_vars:
            return [IfStmt(cond, as_seq(then_stmts), as_seq(else_stmts) if s.else_body is not None else None,
                           (), s.span)]
        then_stmts = self._add_yield(then_stmts, [t for _v, t, _e in phis])
        else_stmts = self._add_yield(else_stmts, [e for _v, _t, e in phis])
        rvs = [self.define(rv, env) for rv in s.return_vars]
        for var, _t, _e in phis:
            rvs.append(self.define(Var(var.name_hint, var.type, var.span), env))
            env[var] = rvs[-1]
        return [IfStmt(cond, as_seq(then_stmts), as_seq(else_stmts), rvs, s.span)]

    @staticmethod
    def _add_yield(stmts: list, values: list) -> list:
        if stmts and isinstance(stmts[-1], YieldStmt):
            return stmts[:-1] + [YieldStmt([*stmts[-1].values, *values], stmts[-1].span)]
        if not values:
            return stmts
        return stmts + [YieldStmt(values)]

    def loop(self, s, env: dict, live_after: set) -> list:
        is_for = isinstance(s, ForStmt)
        body_stmts = body_list(s.body)
        assigned = {v for v in defined_vars(s.body) if v in env}
        reads = _exposed_uses(body_stmts) | (set(used_vars(s.condition)) if not is_for else set())
        carried = [v for v in dict.fromkeys(defined_vars(s.body)) if v in assigned and (v in reads or v in live_after)]
        escaping = [v for v in dict.fromkeys(defined_vars(s.body)) if v not in env and v in live_after
                    and not isinstance(v, IterArg) and v not in s.return_vars]
        escaping_inits = {}
        for v in escaping:
            escaping_inits[v] = self.escaping_init(v, env)
            if escaping_inits[v] is None:
                raise UnsupportedError(f"ConvertToSSA: '{v.name_hint}' is first assigned inside a loop and read after "
                                       "it", v.span or s.span, hint=f"assign '{v.name_hint}' before the loop")
        carried += escaping
        fields = {}
        if is_for:
            fields = {"start": self.subst(s.start, env), "stop": self.subst(s.stop, env),
                      "step": self.subst(s.step, env)}
        body_env = dict(env)
        iter_args = [self.define_iter_arg(ia, self.subst(ia.init_value, env), body_env) for ia in s.iter_args]
        for v in carried:
            ia = IterArg(v.name_hint, v.type, escaping_inits[v] if v in escaping_inits else env[v], v.span)
            self.bound.add(ia)
            iter_args.append(ia)
            body_env[v] = ia
        if is_for:
            fields["loop_var"] = self.define(s.loop_var, body_env)
        else:
            fields["condition"] = self.subst(s.condition, body_env)
        # the body's values may be read again by the next iteration
        loop_live = live_after | _exposed_uses(body_stmts) | (set(used_vars(s.condition)) if not is_for else set())
        self.loops.append({v: body_env[v] for v in carried})
        new_body = self.seq(body_stmts, body_env, loop_live)
        self.loops.pop()
        new_body = self._add_yield(new_body, [body_env[v] for v in carried])
        rvs = [self.define(rv, env) for rv in s.return_vars]
        for v in carried:
            rvs.append(self.define(Var(v.name_hint, v.type, v.span), env))
            env[v] = rvs[-1]
        return [s.replace(iter_args=tuple(iter_args), body=as_seq(new_body, s.body.span), return_vars=tuple(rvs),
                          **fields)]


def _run(func: Function, program: Program) -> Function:
    builder = _SSABuilder(func)
    env = {p: p for p in func.params}
    body = as_seq_like(builder.seq(body_list(func.body), env, set()), func.body)
    return func.replace(body=body)


def convert_to_ssa():
    return function_pass("ConvertToSSA", _run,
                         PassProperties(produced={IRProperty.SSAForm},
                                        invalidated={IRProperty.NormalizedStmtStructure}))
