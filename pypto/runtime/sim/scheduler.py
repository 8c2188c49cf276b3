"""One rank's share of a simulated run: its tasks with dependencies, its cores, its agents.

A Run holds the state of one device; the one loop that steps the agents of every rank lives in
pypto.runtime.sim.launch. The rank's host agent runs the Orchestration function(s) dispatched to
it. Each kernel call submits a Task whose GM
arguments carry the call's directions; a task waits for every earlier unfinished task it
conflicts with (read-after-write, write-after-read, write-after-write on overlapping
buffers), then runs on a free core of its type (AIV, AIC, or a whole cluster for a Group).
Agents switch only at blocking points: a kernel with no blocking op runs to completion as
soon as it is placed. The default policy is deterministic (fixed round-robin order, lowest
free core); `schedule="random"` picks ready tasks, cores and runnable agents with a seeded
RNG to expose missing dependencies and races. `start_ready` places ready tasks, `lane_done`
finishes a kernel lane, `located` names the agent, op and user line of an error.
"""

from __future__ import annotations

import itertools
import random
from typing import Optional

import numpy as np

from pypto.errors import PyptoError, SimulationError, UnsupportedError
from pypto.ir.enums import FunctionType, MemorySpace, SplitMode
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.contexts import CoreContext
from pypto.runtime.sim.race_detector import RaceDetector, array_bounds


class Task:
    __slots__ = ("id", "site", "code", "args", "accesses", "deps_left", "dependents", "lanes_left", "cores",
                 "parent", "block_idx", "block_num", "deferred", "ancestors", "predicate", "early_resolve", "done",
                 "skipped", "seq")

    def __init__(self, tid: int, site, code, args: tuple, accesses: list, parent=None, block_idx=0, block_num=1):
        self.id = tid
        self.site = site
        self.code = code
        self.args = args
        self.accesses = accesses        # [(ndarray, writes: bool)]
        self.deps_left = 0
        self.dependents: list = []
        self.lanes_left = 0
        self.cores: list = []
        self.parent = parent             # the Spmd launch this block belongs to
        self.block_idx = block_idx
        self.block_num = block_num
        self.deferred: Optional[list] = None     # Blocks registered by pld.system.defer_wait
        self.ancestors = 0               # bit k set: task #k happens before this one (fixed at submission)
        self.predicate = None            # (tensor, indices, op, value): run only when it holds at dispatch
        self.early_resolve = False       # allow_early_resolve=True (a hint; the simulator has no pre-staging)
        self.done = False
        self.skipped = False             # retired by a false predicate without running
        self.seq = 0                     # submission number in its dispatch (the host's order, whatever the schedule)

    @property
    def name(self) -> str:
        return f"task #{self.id} {self.code.name}"


class _DummyCode:
    """The `code` of a pl.system.task_dummy task: it has a name and nothing to run."""
    name = "task_dummy"
    func = None


DUMMY_CODE = _DummyCode()


class Agent:
    __slots__ = ("name", "gen", "block", "task", "core", "code")

    def __init__(self, name: str, gen, task: Optional[Task], core, code):
        self.name = name
        self.gen = gen
        self.block: Optional[Block] = None
        self.task = task
        self.core = core
        self.code = code


_PREDICATES = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "gt": lambda a, b: a > b,
               "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b, "le": lambda a, b: a <= b}


def _conflict(a: list, b: list) -> bool:
    for x, wx in a:
        for y, wy in b:
            if (wx or wy) and (x is y or np.may_share_memory(x, y)):
                return True
    return False


def _placements_of(program) -> dict:
    """The program's kernel placements, kept on it so a cached call does not work them out again."""
    got = getattr(program, "_kernel_placements", None)
    if got is None:
        got = {}
        try:
            program._kernel_placements = got
        except AttributeError:                 # a program object that takes no attributes: per run
            pass
    return got


def _is_dual_lane(func) -> bool:
    split = func.attrs.get("split")
    return bool(func.attrs.get("dual_aiv_dispatch")) or (split is not None and split not in (SplitMode.NONE, 0))


def _lane_name(task: Task, ctx) -> str:
    return f"{ctx.core.name} ({task.name}, block {task.block_idx}, lane {ctx.subblock_idx})"


def _run_when_picked(fn, ctx, args):
    """A non-blocking kernel as an agent: it runs, whole, when the scheduler first steps it."""
    fn(ctx, *args)
    return
    yield  # noqa: unreachable — makes this a generator


def _await_all(blocks: list):
    """The agent that completes a task whose kernel registered pld.system.defer_wait conditions."""
    for blk in blocks:
        while not blk.ready():
            yield blk


def check_argument_ranks(site, kernel, args: tuple) -> None:
    """A tensor passed for a kernel parameter of another rank (an orchestration parameter annotated
    `[64]` feeding a kernel's `[1, 64]`) cannot be indexed as the kernel does: say so at the call,
    naming both shapes, instead of failing inside the kernel's first load or store."""
    for param, arg in zip(kernel.params, args):
        shape = getattr(param.type, "shape", None)
        if isinstance(arg, np.ndarray) and shape is not None and arg.ndim != len(shape):
            raise SimulationError(
                f"{site.callee}(): the tensor passed for parameter '{param.name_hint}' has shape "
                f"{list(arg.shape)}, but the parameter is declared with {len(shape)} dims",
                site.span, hint="make the caller's annotation of that tensor match the kernel parameter's shape")


class Run:
    # what a new run starts with, where it is no container of its own (each run sets its own value when it changes)
    host: Optional[Agent] = None
    world = None                         # the World of a distributed run (pld ops find peers through it)
    rank = 0
    options = None                       # the next task's declared deps / opt-outs (system.task_options)
    last_task_id = None                  # what system.task_id returns
    manual_depth = 0                     # inside pl.manual_scope: no inferred edges
    host_ancestors = 0                   # tasks the host has waited for: they happen before what it submits next
    recorder = None                      # a timeline.TimelineRecorder when the run records a swimlane
    busy = None                          # benchmark: [busy s, start, end] per dispatch (launch.run_ranks)
    # id(array) → (array, array_bounds(array)) for the OverlapMap; a launch knows its arguments' (`known_bounds`
    # gives them), asked for when the first task is submitted
    _bounds_seen: Optional[dict] = None

    def __init__(self, program, machine, *, schedule: str = "deterministic", seed: Optional[int] = None,
                 window: int = 64, race_check: bool = False, known_bounds=None):
        self.program = program
        self.machine = machine
        self.epoch = machine.new_run()
        self.random = random.Random(seed if seed is not None else 0) if schedule == "random" else None
        self.window = window
        self.agents: list = []
        self.live: dict = {}             # unfinished tasks by id, in submission order
        self._placement: dict = _placements_of(program)   # kernel code → (core kind, dual lane)
        self._known_bounds = known_bounds
        self.ready: list = []
        self.ids = itertools.count()
        # the task graph: what the OverlapMap infers, what the program declares, what it opts out of
        self.tasks: dict = {}            # every top-level task of the current dispatch by id (done ones too)
        self.overlap: dict = {}          # buffer id → ([writes], [reads]) as (task, lo, hi): what later tasks meet
        self.touched: dict = {}          # buffer id → [(task, lo, hi)] every access, opted out or not, that the
                                         # host has not yet waited for (a host access orders itself after them)
        self.ranks_checked: set = set()  # call sites whose tensor arguments' ranks matched their parameters
        self.manual_dep: dict = {}       # buffer id → buffer of pl.create_tensor(..., manual_dep=True)
        self.race = RaceDetector() if race_check else None

    def restart(self, window: int, race_check: bool, known_bounds) -> "Run":
        """This Run as `Run(program, machine, window=, race_check=, known_bounds=)` starts (deterministic), after
        a dispatch whose tasks all finished with no agent left and `forget_dispatch` dropped its tasks: a straight
        run keeps the Run it finished with for the next call (launch._run_straight)."""
        self.epoch = self.machine.new_run()
        self.window = window
        self._known_bounds = known_bounds
        self.ids = itertools.count()
        if not race_check:
            self.race = None
        elif self.race is None:
            self.race = RaceDetector()          # (a kept one's records went to its last check)
        return self

    def forget_dispatch(self) -> None:
        """Drop what the finished dispatch left (its tasks, their arrays, the call's bounds), so a kept Run holds
        no caller's memory; with dispatch_done's resets, what `restart` assumes."""
        self.tasks.clear()
        self.overlap.clear()
        self.touched.clear()
        self.manual_dep.clear()
        self._known_bounds = self._bounds_seen = self.options = self.last_task_id = None
        self.host_ancestors = self.manual_depth = 0

    # ------------------------------------------------------------------ host side
    def submit(self, site, args: tuple):
        code = self.program.functions[site.callee]
        if id(site) not in self.ranks_checked:        # a site lives as long as the program's code
            check_argument_ranks(site, code.func, args)
            self.ranks_checked.add(id(site))
        accesses = [(a, d != "in") for a, d in zip(args, site.directions)
                    if d is not None and isinstance(a, np.ndarray)]
        task = Task(next(self.ids), site, code, args, accesses)
        bounded = []                              # (array, writes, its bounds): what the OverlapMap compares
        touched = self.touched
        for a, writes in accesses:
            bounds = self._bounds_of(a)
            bounded.append((a, writes, bounds))
            got = touched.get(bounds[0])
            if got is None:
                touched[bounds[0]] = [(task, bounds[1], bounds[2])]
            else:
                got.append((task, bounds[1], bounds[2]))
        options, self.options = self.options, None
        no_dep = tuple([args[i] for i in site.no_dep]) if site.no_dep else ()    # pl.no_dep at an argument
        if options is not None:
            no_dep = tuple(options[1]) + no_dep
        if self.manual_depth:
            tracked = []
        elif not no_dep and not self.manual_dep:   # the usual case: nothing opted out
            tracked = bounded
        else:
            tracked = [x for x in bounded if not self._opted_out(x[0], no_dep)]
        preds = self._inferred(task, tracked)
        if options is not None:
            task.predicate, task.early_resolve = options[2], options[3]
            preds += self._declared(options[0])
        self._add(task, preds)
        return self._results(site, args)

    # ------------------------------------------------------------------ the task graph
    def _bounds_of(self, a: np.ndarray) -> tuple:
        """array_bounds(a), worked out once per array of the run (a run passes the same arrays to task after task)."""
        seen = self._bounds_seen
        if seen is None:
            seen = self._bounds_seen = self._known_bounds() if self._known_bounds is not None else {}
        got = seen.get(id(a))
        if got is None or got[0] is not a:
            got = seen[id(a)] = (a, array_bounds(a))
        return got[1]

    def set_task_options(self, deps, no_dep_args, predicate, op: str, value: int, early: bool) -> None:
        """system.task_options: what the next submitted task declares (deps=, opt-outs, predicate=)."""
        pred = (predicate[0], tuple(int(i) for i in predicate[1:]), op, int(value)) if predicate else None
        self.options = (deps, tuple(no_dep_args), pred, bool(early))

    def note_manual_dep(self, tensor: np.ndarray) -> np.ndarray:
        """pl.create_tensor(..., manual_dep=True): no task infers an edge through this buffer."""
        self.manual_dep[array_bounds(tensor)[0]] = tensor
        return tensor

    def _opted_out(self, a: np.ndarray, no_dep: tuple) -> bool:
        if not no_dep and not self.manual_dep:     # the usual case: nothing opted out, no bounds to work out
            return False
        if array_bounds(a)[0] in self.manual_dep:
            return True
        return any(a is t or (isinstance(t, np.ndarray) and array_bounds(a) == array_bounds(t)) for t in no_dep)

    def _inferred(self, task: Task, accesses: list) -> list:
        """The OverlapMap: the earlier tasks (done or not) whose accesses conflict with these; then insert them.
        A write that covers an earlier entry replaces it (anything meeting those bytes later meets the write,
        which comes after that entry). `accesses`: (array, writes, its bounds)."""
        preds = []
        overlap = self.overlap
        for _, writes, (key, lo, hi) in accesses:
            got = overlap.get(key)
            if got is None:
                writers, readers = overlap[key] = ([], [])
            else:
                writers, readers = got
            for entries in ((writers, readers) if writes else (writers,)):   # a read meets only writes
                for other, olo, ohi in entries:
                    if olo < hi and lo < ohi and other is not task:
                        preds.append(other)
                if writes:
                    entries[:] = [e for e in entries if not (lo <= e[1] and e[2] <= hi)]
            (writers if writes else readers).append((task, lo, hi))
        return preds

    def _declared(self, deps) -> list:
        """deps=[...]: TaskIds (ints), invalid ones (None) and TaskId arrays (tuples) of them."""
        out = []
        stack = list(deps) if isinstance(deps, (list, tuple)) else [deps]
        while stack:
            d = stack.pop(0)
            if d is None:
                continue
            if isinstance(d, (list, tuple)):
                stack[:0] = list(d)
                continue
            other = self.tasks.get(int(d))
            if other is None:
                raise SimulationError(f"deps= names TaskId {d}, which is no task of this dispatch")
            out.append(other)
        return out

    def _add(self, task: Task, preds: list) -> None:
        """Wire a new task: it waits for its unfinished predecessors and inherits their happens-before sets."""
        ancestors = self.host_ancestors
        if preds:
            seen = set()
            for p in preds:
                if p.id in seen:
                    continue
                seen.add(p.id)
                ancestors |= p.ancestors | (1 << p.id)
                if not p.done:
                    p.dependents.append(task)
                    task.deps_left += 1
        task.ancestors = ancestors
        task.seq = len(self.tasks)
        self.tasks[task.id] = task
        if self.recorder is not None:
            self.recorder.submitted(self, task)
        self.live[task.id] = task
        self.last_task_id = task.id
        if task.deps_left == 0:
            self.ready.append(task)

    def submit_dummy(self, deps):
        """pl.system.task_dummy(deps=[...]): a task with no work; None when it would wait for nothing."""
        preds = self._declared(deps)
        if not preds:
            return None
        task = Task(next(self.ids), None, DUMMY_CODE, (), [])
        self._add(task, preds)
        return task.id

    def dispatch_done(self) -> None:
        """The dispatch's tasks all finished: check them for races, and start the next dispatch afresh."""
        if self.race is not None:
            self.race.check()
        self.tasks.clear()
        self.overlap.clear()
        self.touched.clear()
        self.manual_dep.clear()
        self.host_ancestors = 0
        self.options = None
        self.manual_depth = 0

    def _predicate_holds(self, task: Task) -> bool:
        tensor, indices, op, value = task.predicate
        try:
            element = tensor[indices].item()
        except IndexError:
            raise SimulationError(f"predicate= reads element {list(indices)} of a tensor of shape {list(tensor.shape)}: "
                                  "outside the tensor", getattr(task.site, "span", None),
                                  hint="the predicate's index must lie inside the tensor it reads") from None
        return bool(_PREDICATES[op](element, value))

    @staticmethod
    def _results(site, args):
        if not site.ret_map:
            return None
        if site.multi:
            return tuple(args[i] for i in site.ret_map)
        return args[site.ret_map[0]]

    def window_block(self) -> Optional[Block]:
        if len(self.live) < self.window:
            return None
        return Block(lambda: len(self.live) < self.window, "task submission",
                     f"{len(self.live)} tasks in flight, window {self.window}")

    def gm_block(self, tensors) -> Optional[Block]:
        mine = [(t, True) for t in tensors if isinstance(t, np.ndarray)]
        for t, _ in mine:                        # the host waits for these: they precede what it submits next
            key, lo, hi = self._bounds_of(t)
            entries = self.touched.get(key)
            if not entries:
                continue
            keep = []
            for task, olo, ohi in entries:       # each entry leaves once the host is ordered after its task
                if olo < hi and lo < ohi:
                    self.host_ancestors |= task.ancestors | (1 << task.id)
                elif not (self.host_ancestors >> task.id) & 1:
                    keep.append((task, olo, ohi))
            self.touched[key] = keep

        def clear() -> bool:
            return not any(_conflict(t.accesses, mine) for t in self.live.values())
        if clear():
            return None
        return Block(clear, "host access to a tensor", "waiting for the tasks that use it")

    # ------------------------------------------------------------------ placement
    def _free(self, cores: list):
        if not self.random:
            for c in cores:
                if not c.busy:
                    return c
            return None
        free = [c for c in cores if not c.busy]
        return self.random.choice(free) if free else None

    def _free_cluster(self, need_aic: bool):
        free = [cl for cl in self.machine.clusters
                if not any(c.busy for c in cl.aiv) and (not need_aic or not cl.aic.busy)]
        if not free:
            return None
        return self.random.choice(free) if self.random else free[0]

    def _kind(self, code) -> str:
        t = code.func.func_type
        if t is FunctionType.InCore:       # not split by ExpandMixedKernel: place by the memory it uses
            spaces = {s.space for s in code.slots}
            if spaces <= {MemorySpace.Vec}:
                return "AIV"
            if not spaces & {MemorySpace.Vec}:
                return "AIC"
            raise SimulationError(f"InCore kernel '{code.name}' uses both vector and cube memory; "
                                  "ExpandMixedKernel must split it", code.func.span)
        if t in (FunctionType.AIV, FunctionType.AIC, FunctionType.Group, FunctionType.Spmd):
            return t.name
        raise UnsupportedError(f"launching a {t.name} function ('{code.name}') in the simulator", code.func.span)

    def _try_start(self, task: Task) -> bool:
        if task.code is DUMMY_CODE or (task.predicate is not None and not self._predicate_holds(task)):
            task.skipped = task.code is not DUMMY_CODE  # a dummy, or a false predicate: retired, never placed
            if self.recorder is not None:
                self.recorder.task_finished(self, task)
            self._finish(task)
            return True
        placed = self._placement.get(task.code)     # (kind, dual lane): fixed per kernel, worked out once
        if placed is None:
            placed = self._placement[task.code] = (self._kind(task.code), _is_dual_lane(task.code.func))
        kind = placed[0]
        if kind == "Spmd":
            self._launch_spmd(task)
        elif kind == "AIV" and not placed[1]:
            core = self._free(self.machine.aiv_cores)
            if core is None:
                return False
            self._launch_on(task, core)
        elif kind == "AIV":
            cl = self._free_cluster(False)
            if cl is None:
                return False
            self._launch(task, [(c, task.code, task.args, c.lane, 2) for c in cl.aiv])
        elif kind == "AIC":
            core = self._free(self.machine.aic_cores)
            if core is None:
                return False
            self._launch_on(task, core)
        else:
            cl = self._free_cluster(True)
            if cl is None:
                return False
            self._launch_group(task, cl)
        return True

    def _reserve(self, task: Task, core) -> None:
        core.busy = True
        core.begin_run(self.epoch)
        task.cores.append(core)

    def _launch(self, task: Task, lanes: list) -> None:
        for spec in lanes:
            self._reserve(task, spec[0])
        task.lanes_left += len(lanes)
        for core, code, args, lane, nlanes in lanes:
            ctx = CoreContext(self, core, task, task.block_idx, task.block_num, lane, nlanes)
            self._start_lane(task, code, ctx, args, None)    # the agent's name: spelled only when needed

    def _launch_on(self, task: Task, core) -> None:
        """`_launch` of the usual task: one lane on one core."""
        self._reserve(task, core)
        task.lanes_left += 1
        self._start_lane(task, task.code, CoreContext(self, core, task, task.block_idx, task.block_num), task.args, None)

    def _launch_group(self, task: Task, cl) -> None:
        for core in [cl.aic, *cl.aiv]:
            self._reserve(task, core)
        ctx = CoreContext(self, cl.aic, task, task.block_idx, task.block_num)
        task.lanes_left += 1                    # the Group body itself; members add their lanes
        self._start_lane(task, task.code, ctx, task.args, f"cluster {cl.index} ({task.name})")

    def _launch_spmd(self, task: Task) -> None:
        """Run the Spmd wrapper once per block; each block's kernel call becomes a block task."""
        n = task.site.core_num
        task.lanes_left += n
        for b in range(n):
            ctx = CoreContext(self, None, task, b, n)
            ctx.cluster = None
            self._start_lane(task, task.code, ctx, task.args, f"{task.name} block {b}")

    def spawn(self, group_ctx: CoreContext, site, args: tuple):
        """A member kernel of a running Group (placed on its cluster) or one block of an Spmd launch."""
        task = group_ctx.task
        if task.code.func.func_type is FunctionType.Spmd:
            code = self.program.functions[site.callee]
            block = Task(next(self.ids), site, code, args, task.accesses, parent=task,
                         block_idx=group_ctx.block_idx, block_num=group_ctx.block_num)
            task.lanes_left += 1
            self.ready.append(block)
            return self._results(site, args)
        code = self.program.functions[site.callee]
        cl = group_ctx.cluster
        if code.func.func_type is FunctionType.AIC:
            lanes = [(cl.aic, 0, 1)]
        elif _is_dual_lane(code.func):
            lanes = [(c, c.lane, 2) for c in cl.aiv]
        else:
            lanes = [(cl.aiv[0], 0, 1)]
        task.lanes_left += len(lanes)
        for core, lane, nlanes in lanes:
            ctx = CoreContext(self, core, task, task.block_idx, task.block_num, lane, nlanes)
            # random schedules also start a Group's non-blocking members late, so that a missing
            # AIC → AIV ordering (an unfenced GM hand-over) shows up as a wrong result
            self._start_lane(task, code, ctx, args, f"{core.name} ({task.name}: {code.name}, lane {lane})",
                             defer=self.random is not None)
        return self._results(site, args)

    def _start_lane(self, task: Task, code, ctx: CoreContext, args: tuple, name: Optional[str],
                    defer: bool = False) -> None:
        """Start one lane of `task` (`name`: its agent's name; None: a kernel lane, named from `ctx` when needed)."""
        if self.recorder is not None:
            self.recorder.lane_started(self, ctx, task, code)
        if code.is_generator or defer:
            name = name if name is not None else _lane_name(task, ctx)
            agent = Agent(name, None, task, ctx.core, code)
            ctx.agent = agent
            try:
                agent.gen = code.fn(ctx, *args) if code.is_generator else _run_when_picked(code.fn, ctx, args)
            except BaseException as e:
                raise self.located(e, name) from None
            self.agents.append(agent)
            return
        try:
            code.fn(ctx, *args)
        except BaseException as e:
            raise self.located(e, name if name is not None else _lane_name(task, ctx))
        self.lane_done(task)

    def lane_done(self, task: Task) -> None:
        task.lanes_left -= 1
        if task.lanes_left:
            return
        for core in task.cores:
            core.busy = False
        if self.recorder is not None:
            self.recorder.task_finished(self, task)
        if task.deferred:                         # the kernel ended; its completion waits for signal cells
            conds, task.deferred, task.cores, task.lanes_left = task.deferred, None, [], 1
            self.agents.append(Agent(f"{task.name} (deferred completion)", _await_all(conds), task, None, task.code))
            return
        if task.parent is not None:               # a block of an Spmd launch
            self.lane_done(task.parent)
            return
        self._finish(task)

    def _finish(self, task: Task) -> None:
        task.done = True
        del self.live[task.id]
        for d in task.dependents:
            d.deps_left -= 1
            if d.deps_left == 0:
                self.ready.append(d)

    def start_ready(self) -> bool:
        """Start ready tasks until none can start: the first in ready order that finds a core (random: in a
        shuffled order), then from the front again, since a started task may finish and make others ready."""
        if self.random:
            return self._start_shuffled()
        ready = self.ready
        started = False
        i = 0
        while i < len(ready):
            task = ready.pop(i)                  # (out first: a kernel that runs to its end appends its dependents)
            if self._try_start(task):
                started = True
                i = 0
            else:
                ready.insert(i, task)
                i += 1
        return started

    def _start_shuffled(self) -> bool:
        started = False
        while self.ready:
            order = list(self.ready)
            self.random.shuffle(order)
            progress = False
            for task in order:
                if self._try_start_checked(task):
                    progress = started = True
                    break                        # starting a task may finish others and change `ready`
            if not progress:
                break
        return started

    def _try_start_checked(self, task: Task) -> bool:
        # remove first: a non-blocking kernel completes inside _try_start and may append new ready tasks
        idx = self.ready.index(task)
        del self.ready[idx]
        if self._try_start(task):
            return True
        self.ready.insert(idx, task)
        return False

    # ------------------------------------------------------------------ diagnostics
    def located(self, exc: BaseException, agent_name: str) -> BaseException:
        """Name the agent, the op and the user's source line of an exception raised while simulating."""
        if getattr(exc, "_sim_located", False) or not isinstance(exc, Exception):
            return exc
        what, span = "", None
        tb = exc.__traceback__
        while tb is not None:
            code = self.program.by_filename.get(tb.tb_frame.f_code.co_filename)
            if code is not None:
                what, span = code.lines.get(tb.tb_lineno, (what, span))
            tb = tb.tb_next
        op = f" in {what}" if what else ""
        if isinstance(exc, PyptoError) and what and exc.message.startswith(what):
            op = ""                              # the op already names itself
        if isinstance(exc, PyptoError):
            exc.message = f"{agent_name}{op}: {exc.message}"
            exc.span = None
            exc.with_span(span)
            exc.args = (exc._one_line(),)
            out = exc
        else:
            msg = str(exc)
            if isinstance(exc, ValueError) and "read-only" in msg:
                msg = "a kernel wrote a tensor passed as an In parameter (read-only in the simulator)"
            out = SimulationError(f"{agent_name}{op}: {type(exc).__name__}: {msg}", span)
            out.__cause__ = exc
        out._sim_located = True
        return out
