"""The deferred-completion waiter contract, checked where every kernel gets its final type.

A kernel that calls `pld.system.defer_wait` hands its task's completion to the scheduler: the task
stays pending until the condition holds. That is only sound for a task-level waiter: a kernel
OutlineIncoreScopes made from an orchestrator's `pl.at` scope (it carries the
`deferred_completion_waiter` attr), launched by a plain Orchestration call as one block, with no
dispatch predicate and without early resolve. Anything else (a hand-written helper, an AIV kernel,
a marker with no such call site, an SPMD launch) would let dependents start before the condition
holds, so it is rejected here, at the defer_wait or at the call.
"""

from __future__ import annotations

from pypto.errors import ValueCheckError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import GlobalVar
from pypto.ir.function import Program
from pypto.passes.analysis import calls_in

MARK = "deferred_completion_waiter"
_KERNELS = (FunctionType.InCore, FunctionType.AIV, FunctionType.AIC)


def _defer_wait(func):
    return next((c for c in calls_in(func.body) if not isinstance(c.op, GlobalVar)
                 and c.op.name == "pld.system.defer_wait"), None)


def check_waiters(program: Program) -> None:
    funcs = list(program.functions.values())
    for f in funcs:
        if f.func_type not in _KERNELS:
            continue
        wait = _defer_wait(f)
        if wait is None:
            continue
        if not f.attrs.get(MARK):
            raise ValueCheckError(f"kernel {f.name}: pld.system.defer_wait here bypasses the deferred-waiter task "
                                  "contract (only a task-level waiter may defer its task's completion)", wait.span,
                                  hint="write the wait in an orchestrator's `with pl.at(level=pl.Level.CORE_GROUP):` "
                                       "scope, which outlines it as a waiter kernel")
        sites = [(g, c) for g in funcs for c in calls_in(g.body)
                 if isinstance(c.op, GlobalVar) and c.op.name == f.name]
        orch = [(g, c) for g, c in sites if g.func_type is FunctionType.Orchestration]
        if not orch:
            raise ValueCheckError(f"waiter kernel {f.name} has no task-level Orchestration call site, so nothing "
                                  "tracks the completion it defers", wait.span,
                                  hint="call it from an Orchestration function (a pl.at scope there)")
        for g, c in orch:
            attrs = c.attrs or {}
            if attrs.get("allow_early_resolve"):
                raise ValueCheckError(f"waiter kernel {f.name} (called in {g.name}) cannot use "
                                      "allow_early_resolve=True: its completion is the deferred condition", c.span)
            core_num = attrs.get("core_num")
            if attrs.get("sync_start") or (core_num is not None and getattr(core_num, "value", core_num) != 1):
                raise ValueCheckError(f"waiter kernel {f.name} (called in {g.name}) must be launched as a "
                                      "single-block task (no core_num > 1, no sync_start)", c.span)
            if attrs.get("predicate") is not None:
                raise ValueCheckError(f"waiter kernel {f.name} (called in {g.name}) cannot use a dispatch predicate: "
                                      "a skipped dispatch would leave its deferred completion pending", c.span)
