"""SSA versions of a GM tensor, traced back to the tensor they write (seed 004, step 6 last bullet).

Every write to a GM tensor makes a new SSA version of it: a `tile.store` result, a loop's
carried result, a branch's merged result. All versions name the same memory. After the split
a side may keep a reference to a version only the other side defines (the other side stored,
or the whole loop / branch that stored was the other side's); that reference is repointed to
the nearest version this side does define — the store's destination, the loop's carry or its
init, the value both branches agree on — which ends at the kernel's parameter.

    out_1 = store(t, .., out_0)          # cube side only
    x = load(out_1, ..)                  # vector side: x = load(out_0, ..)

The same chain tells which parameter a returned value writes back (`returned_params`).
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.expr import Call, GlobalVar, IterArg, Var
from pypto.ir.stmt import (AssignStmt, ForStmt, IfStmt, ReturnStmt, WhileStmt, YieldStmt, child_bodies,
                           flatten_to_stmts)
from pypto.ir.types import TensorType
from pypto.ir.visitor import substitute

_MAX_CHAIN = 256          # versions of one tensor in a kernel; a longer chain is a cycle, not a kernel


def _trailing_yield(body) -> Optional[YieldStmt]:
    stmts = flatten_to_stmts(body) if body is not None else []
    return stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None


class VersionLinks:
    """For each tensor version defined in a body, the earlier version(s) it continues."""

    def __init__(self, body):
        self.previous: dict = {}            # Var → the version it overwrites or aliases
        self.branches: dict = {}            # if return var → [the value each branch yields]
        self._walk(body)

    def _walk(self, body) -> None:
        for s in flatten_to_stmts(body):
            if isinstance(s, AssignStmt):
                v = s.value
                if isinstance(v, Var):
                    self.previous[s.var] = v
                elif isinstance(v, Call) and not isinstance(v.op, GlobalVar) and v.op.reuses_input is not None:
                    self.previous[s.var] = v.args[v.op.reuses_input]
            elif isinstance(s, (ForStmt, WhileStmt)):
                for ia in s.iter_args:
                    self.previous[ia] = ia.init_value
                yld = _trailing_yield(s.body)
                for i, rv in enumerate(s.return_vars):
                    if yld is not None and i < len(yld.values):
                        self.previous[rv] = yld.values[i]
            elif isinstance(s, IfStmt):
                ylds = [_trailing_yield(s.then_body), _trailing_yield(s.else_body)]
                if s.else_body is not None and all(y is not None for y in ylds):
                    for i, rv in enumerate(s.return_vars):
                        if all(i < len(y.values) for y in ylds):
                            self.branches[rv] = [y.values[i] for y in ylds]
            for child in child_bodies(s):
                self._walk(child)

    def nearest(self, v, known, depth: int = 0):
        """The first version along v's chain that `known` holds (v itself when it does), else None."""
        for _ in range(_MAX_CHAIN):
            if not isinstance(v, Var):
                return None
            if v in known:
                return v
            if v in self.branches:
                if depth > _MAX_CHAIN:
                    return None
                ends = {self.nearest(b, known, depth + 1) for b in self.branches[v]}
                return ends.pop() if len(ends) == 1 and None not in ends else None
            if v not in self.previous:
                return None
            v = self.previous[v]
        return None


def repoint_dangling(body, links: VersionLinks, known: set):
    """Replace each tensor version the body reads but does not define by the nearest one it has."""
    from pypto.passes.analysis import defined_vars, used_vars
    have = set(known) | set(defined_vars(body))
    mapping = {}
    for v in used_vars(body):
        if isinstance(v, Var) and not isinstance(v, IterArg) and v not in have \
                and isinstance(v.type, TensorType):
            target = links.nearest(v, have)
            if target is not None:
                mapping[v] = target
    return substitute(body, mapping) if mapping else body


def param_of(v, links: VersionLinks, params) -> Optional[Var]:
    """The parameter a returned tensor version writes back (a parameter returned as is), or None."""
    if not isinstance(getattr(v, "type", None), TensorType):
        return v if v in set(params) else None
    return links.nearest(v, set(params))


def returned_params(func) -> list:
    """For each value the function returns, the parameter it writes back (or None): a new Group
    returns those parameters itself when every returned value has one."""
    stmts = flatten_to_stmts(func.body)
    if not stmts or not isinstance(stmts[-1], ReturnStmt):
        return []
    links = VersionLinks(func.body)
    return [param_of(v, links, func.params) for v in stmts[-1].values]
