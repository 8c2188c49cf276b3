"""Launch plans: what a chip call submits when that is the same on every call, worked out once.

An Orchestration function whose body is only kernel calls on its own parameters (none marked
`pl.no_dep`) and a return of them (what a `@pl.jit` function made of `pl.at` scopes lowers to)
submits the same tasks, with the same dependency edges, on every call; only the arrays differ. Its LaunchPlan holds one
TaskTemplate per call — the call site, the kernel's code, which parameters it takes and the
earlier tasks the OverlapMap makes it wait for (found once with the scheduler's own `_inferred`,
every parameter one whole buffer) — and where the returned values come from. `replay` then
submits the tasks straight from the templates (Run._add: the same ids, edges, happens-before
sets and ready order as the generated code's `submit`s), without running the orchestration's
code, binding byte bounds or filling the OverlapMap; the tasks run as any others do.

A plan is used only where every parameter is its own buffer (or only read): for the arrays a
chip call binds (read-only views of the caller's In arrays, private Out / InOut buffers), never
for a ChipWorker's device tensors or a world's windows, which may alias. The generated code would
stop for the task window before the window-th task; a plan longer than the window is not used.
A plan whose kernels never block (`never_blocks`, decided from the kernels' code when the plan is
made) lets launch run the call without its agent loop (launch._straight_plan, _run_straight).

    plan = launch_plan(sim, code)          # None: the orchestration does more than submit
    result = plan.replay(run, args)        # inside the rank's host agent
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, flatten_to_stmts
from pypto.ir.types import TensorType
from pypto.runtime.sim.codegen import HOST_TYPES
from pypto.runtime.sim.scheduler import Task, check_argument_ranks


_SINGLE_KERNEL_TYPES = (FunctionType.AIV, FunctionType.AIC, FunctionType.InCore)


class TaskTemplate:
    """One submitted task: its site and code, its argument parameters, its OverlapMap predecessors."""
    __slots__ = ("site", "code", "params", "accesses", "gm", "preds")

    def __init__(self, site, code, params: tuple, tensors: frozenset):
        self.site = site
        self.code = code
        self.params = params              # parameter index of each argument
        self.accesses = tuple((k, d != "in") for k, d in enumerate(site.directions) if d is not None)
        # (parameter index, writes) of the accesses that are arrays: the tensor parameters (a chip call binds
        # each to an array, each scalar to a number)
        self.gm = tuple((params[k], w) for k, w in self.accesses if params[k] in tensors)
        self.preds: tuple = ()            # template indices, in the order the OverlapMap finds them


class LaunchPlan:
    __slots__ = ("templates", "returns", "multi", "ranks_checked", "ranks_seen", "never_blocks", "spare_run")

    def __init__(self, templates: list, returns: Optional[tuple], multi: bool, param_ranks: Optional[tuple] = None):
        self.templates = tuple(templates)
        self.returns = returns            # per returned value: ("param", i) or ("site", template k); None: no return
        self.multi = multi
        # Run.submit checks each call's tensor ranks against the kernel's parameters: a chip call binds arrays of
        # the orchestration parameters' declared ranks (`param_ranks`; -1 for a scalar), so when those agree with
        # every kernel parameter nothing is left to check; else as submit does, once per argument ranks seen
        self.ranks_checked = param_ranks is not None and _ranks_agree(self.templates, param_ranks)
        self.ranks_seen: set = set()
        # every kernel runs to its end once placed on one core or one cluster's AIV pair: no blocking op (no
        # pipe, wait or cross-core sync: its code is no generator), no Group / Spmd members to start
        self.never_blocks = all(not t.code.is_generator and t.code.func.func_type in _SINGLE_KERNEL_TYPES
                                for t in self.templates)
        self.spare_run = None             # the Run the last straight run finished with (launch._run_straight)

    def fits(self, window: int) -> bool:
        return len(self.templates) <= window

    def replay(self, run, args):
        """Submit the templates' tasks on `args` (the dispatch's argument list: a chip call's bound arrays, of
        their parameters' ranks, and numbers); the orchestration's result."""
        if not self.ranks_checked:
            ranks = tuple([getattr(a, "ndim", -1) for a in args])
            if ranks not in self.ranks_seen:
                for t in self.templates:
                    check_argument_ranks(t.site, t.code.func, tuple([args[i] for i in t.params]))
                self.ranks_seen.add(ranks)
        tasks = []
        ids = run.ids
        for t in self.templates:
            task = Task(next(ids), t.site, t.code, tuple([args[i] for i in t.params]), [(args[i], w) for i, w in t.gm])
            run._add(task, [tasks[j] for j in t.preds])
            tasks.append(task)
        if self.returns is None:
            return None
        values = [args[i] if kind == "param" else run._results(self.templates[i].site, tasks[i].args)
                  for kind, i in self.returns]
        return tuple(values) if self.multi else values[0]


def _ranks_agree(templates: tuple, param_ranks: tuple) -> bool:
    """Whether every kernel parameter has the rank of the orchestration parameter passed for it (-1: a scalar)."""
    for t in templates:
        for param, i in zip(t.code.func.params, t.params):
            shape = getattr(param.type, "shape", None)
            if shape is not None and param_ranks[i] != -1 and param_ranks[i] != len(shape):
                return False
    return True


def launch_plan(sim, code) -> Optional[LaunchPlan]:
    """The plan of host function `code` of SimProgram `sim` (worked out once, kept on the code), or None."""
    plan = getattr(code, "_launch_plan", False)
    if plan is False:
        plan = _make_plan(sim, code)
        code._launch_plan = plan
    return plan


def _make_plan(sim, code) -> Optional[LaunchPlan]:
    func = code.func
    where = {p: ("param", i) for i, p in enumerate(func.params)}
    ranks = tuple(len(p.type.shape) if isinstance(p.type, TensorType) else -1 for p in func.params)
    tensors = frozenset(i for i, r in enumerate(ranks) if r != -1)
    templates: list = []
    returns, multi = None, False
    stmts = flatten_to_stmts(func.body)
    for n, s in enumerate(stmts):
        if isinstance(s, ReturnStmt):
            if n != len(stmts) - 1 or not all(isinstance(v, Var) and v in where for v in s.values):
                return None
            returns, multi = tuple(where[v] for v in s.values), len(s.values) != 1
            if not s.values:
                returns = None
            continue
        call = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
        if not isinstance(call, Call) or not isinstance(call.op, GlobalVar):
            return None
        callee = sim.program.get_function(call.op.name)
        k = len(templates)
        if (callee is None or callee.func_type in HOST_TYPES or k >= len(code.sites)
                or code.sites[k].callee != call.op.name or call.op.name not in sim.functions):
            return None
        site = code.sites[k]
        if getattr(site, "no_dep", ()):
            return None                          # an argument left out of dependency tracking: the general path
        params = []
        for a, d in zip(call.args, site.directions):
            got = where.get(a) if isinstance(a, Var) else None
            if got is None or got[0] != "param":
                return None
            if d not in (None, "in") and func.param_directions[got[1]] is ParamDirection.In:
                return None                  # a kernel writing an In parameter (it fails): the general path
            params.append(got[1])
        if len(params) != len(call.args):
            return None
        templates.append(TaskTemplate(site, sim.functions[call.op.name], tuple(params), tensors))
        if isinstance(s, AssignStmt):           # the call's value: the argument it returns, else the site's results
            single = site.ret_map is not None and len(site.ret_map) == 1 and not site.multi
            where[s.var] = ("param", params[site.ret_map[0]]) if single else ("site", k)
    if len(templates) != len(code.sites):
        return None
    _find_preds(templates)
    return LaunchPlan(templates, returns, multi, ranks)


def _find_preds(templates: list) -> None:
    """Each template's OverlapMap predecessors: the scheduler's `_inferred` over whole-parameter buffers."""
    from pypto.runtime.sim.scheduler import Run
    probe = Run.__new__(Run)
    probe.overlap = {}
    for t in templates:
        found = Run._inferred(probe, t, [(None, w, (t.params[k], 0, 1)) for k, w in t.accesses])
        t.preds = tuple(templates.index(p) for p in found)
