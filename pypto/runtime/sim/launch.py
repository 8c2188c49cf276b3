"""`launch`: the one path from a call to numpy results, for one chip and for a world of N ranks.

    launch(compiled, [a, b, out], config=RunConfig())       # what compiled(a, b, out) does
    launch(dist_compiled, [x, y], config=cfg)                # a HOST orchestrator over N ranks

A call goes through four steps, the same for every caller (`CompiledProgram.__call__`,
`ChipWorker.run`, `DistributedCompiledProgram.__call__`, `@pl.jit`):
1. bind: the arguments against the entry's parameter plans (HostArgs: read-only In views,
   private Out / InOut buffers; a ChipWorker's DeviceTensors are passed as device memory);
2. dispatch: a chip program is one dispatch of its Orchestration function on rank 0; a
   distributed program runs its generated HOST orchestrator, which yields one dispatch per
   `self.chip(..., device=r)` (pypto.runtime.sim.host_level);
3. run: one scheduler loop (`run_ranks`) steps every agent of every rank — a single chip is a
   world of one — until all tasks finished, or raises DeadlockError naming every blocked agent;
4. write back the private buffers into the caller's arrays (only after the whole run succeeded).
"""

from __future__ import annotations

import logging
import random
import time
from typing import Optional

import numpy as np

from pypto.call_site import user_call_span
from pypto.errors import DeadlockError, PyptoError, SimulationError, TypeCheckError, ValueCheckError
from pypto.ir.enums import ParamDirection
from pypto.log_level import pypto_logger
from pypto.runtime.config import SIM_PLATFORMS, default_config, require_simulator
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.contexts import HostContext
from pypto.runtime.sim.gc_pause import collect_if_due, collections_paused
from pypto.runtime.sim.host_args import HostArgs, plan_params
from pypto.runtime.sim.launch_plan import launch_plan
from pypto.runtime.sim.machine import machine_for
from pypto.runtime.sim.progress import TICK_STEPS, RunProgress
from pypto.runtime.sim.scheduler import Agent, Run
from pypto.runtime.sim.timeline import wants_timeline
from pypto.runtime.sim.watchdog import WatchdogExpired, current_watchdog, watching

_LOG = pypto_logger("runtime")         # one Logger object; its level is read at each call


def launch(compiled, args, *, config=None, world=None, worker=None, torch: bool = False, spans=None):
    """Run one call of `compiled`; the result in return style, else None (outputs written in place).
    `spans` (a dict, for pypto.runtime.benchmark) receives the perf_counter time at each step's end."""
    if spans is not None:
        spans["start"] = time.perf_counter()
    try:
        config = _config_for(compiled, config, worker)
        host, sim_args = _bind(compiled, list(args), config, worker, torch)
    except PyptoError as e:                    # a call mistake: at the caller's line
        raise e.with_span(user_call_span())
    try:
        return _run_bound(compiled, config, host, sim_args, world, worker, spans)
    except BaseException:
        host.abandon()                         # (an Out record's pending result holds the inputs)
        raise


def _run_bound(compiled, config, host, sim_args: list, world, worker, spans):
    """`launch` after binding: run, then write back (or return) the results."""
    if spans is not None:
        spans["bind"] = time.perf_counter()
    timeline = wants_timeline(config)
    sim = _program_sim(compiled, config, timeline)
    host_function = _host_function(compiled)
    host.fill_outputs(sim, compiled.entry if host_function is None else None)   # (Out poison: host_args)
    recorder = _timeline_recorder(sim) if timeline else None

    def run(per_rank):
        _log_run(compiled, host_function, config, len(per_rank))
        busy = [] if spans is not None else None
        results = run_ranks(sim, per_rank, world=world, schedule=config.sim_schedule, seed=config.sim_seed,
                            window=config.sim_task_window, race_check=config.sim_race_check, recorder=recorder,
                            busy=busy, known_bounds=host.bounds if host_function is None else None,
                            planned=host_function is None and worker is None)
        if busy is not None:                       # benchmark: each rank's dispatches, in order, over all phases
            timed = spans.setdefault("dispatches", {})
            for r, records in enumerate(busy):
                timed.setdefault(r, []).extend((code.name, *rec) for (code, _), rec in zip(per_rank[r], records))
        return results

    compiled.last_timeline = None
    plan = None
    try:
        with watching(config.sim_watchdog_seconds) as dog:   # the livelock watchdog of the whole call
            if host_function is None:                  # a chip program: one dispatch on rank 0
                code = sim.entry_code(compiled.entry)
                if worker is None and recorder is None and spans is None and config.sim_schedule == "deterministic":
                    plan = _straight_plan(sim, code, config.sim_task_window)
                if plan is not None:
                    _log_run(compiled, host_function, config, 1)
                    results = _run_straight(sim, code, plan, sim_args, window=config.sim_task_window,
                                            race_check=config.sim_race_check, known_bounds=host.bounds)
                else:
                    results = run([[(code, sim_args)]])
            else:
                from pypto.runtime.distributed_sub_workers import sub_worker_runner
                from pypto.runtime.sim.host_level import host_phases
                from pypto.runtime.sim.world import World
                if world is None:
                    pool = compiled.__dict__.setdefault("_window_pool", {})
                    world = World(compiled.distributed_config.world_size, pool=pool)
                # a HOST orchestrator runs in phases: a SubWorker call waits for the dispatches before it
                phases = host_phases(compiled.host_code(), world, sim, sim_args,
                                     sub_worker_runner(compiled, worker, host), config.sim_host_collectives)
                while True:
                    try:
                        per_rank = next(phases)
                    except StopIteration:
                        break
                    except WatchdogExpired as e:       # the HOST orchestrator itself spins
                        raise _livelock([], dog, None, e.span, f"HOST orchestrator ({host_function.name})") from None
                    except PyptoError as e:            # at the HOST orchestrator's line that raised it
                        host_code = compiled.host_code()
                        raise e.with_span(_generated_line_span({**sim.by_filename, host_code.filename: host_code},
                                                               e.__traceback__))
                    results = run(per_rank)
    finally:
        if recorder is not None:                   # dfx_outputs/swimlane.json, deps.json (also of a failed run)
            from pypto.runtime.sim.timeline import write_outputs
            compiled.last_timeline = write_outputs(recorder, compiled, config)
    if spans is not None:
        spans["run"] = time.perf_counter()
    if world is not None:
        compiled.last_windows = world.windows
        world.release()
    if host_function is None and not host.return_style and not (plan is not None and _returns_own(compiled, plan)):
        _returns_into_outputs(compiled, results[0][0], sim_args)
    host.write_back()
    if spans is not None:
        spans["write_back"] = time.perf_counter()
    if not host.return_style:
        return None
    if host_function is not None:                  # a HOST orchestrator returns its Out tensors, allocated here
        outs = host.outputs
        return host.results(outs[0] if len(outs) == 1 else tuple(outs))
    return host.results(results[0][0])


def _log_run(compiled, host_function, config, ranks: int) -> None:
    if _LOG.isEnabledFor(logging.INFO):
        name = getattr(compiled, "entry", None) or getattr(host_function, "name", None) or "program"
        _LOG.info("running %s on %s (%d rank(s), %s schedule)", name, config.platform, ranks, config.sim_schedule)


def _host_function(compiled):
    """A distributed program's HOST orchestrator function, None for a chip program. Read from the instance:
    a CompiledProgram answers a missing attribute through its entry lookup, which builds an AttributeError."""
    got = getattr(compiled, "__dict__", None)
    return got.get("host_function") if got is not None else getattr(compiled, "host_function", None)


def _program_sim(compiled, config, timeline: bool):
    """The call's SimProgram; the usual one (no swimlane, no strict memory, already generated) without
    `_sim_for` asking the config and the environment for a timeline a second time."""
    shared = getattr(compiled, "_shared", None)
    if shared is not None and not timeline and not config.sim_strict_memory and shared["sim"] is not None:
        return shared["sim"]
    return compiled._sim_for(config)


def _timeline_recorder(sim):
    """The TimelineRecorder of a run that asks for a swimlane / task graph (pypto.runtime.sim.timeline)."""
    from pypto.runtime.sim.timeline import TimelineRecorder
    recorder = TimelineRecorder(sim.platform)
    recorder.generated_files = sim.by_filename
    return recorder


# ------------------------------------------------------------------ 1. binding
def _config_for(compiled, config, worker):
    if worker is not None:
        require_simulator(compiled.platform)
        if worker.platform != compiled.platform:
            raise ValueCheckError(f"the program was compiled for {compiled.platform}, the worker runs "
                                  f"{worker.platform}")
        return worker.config
    if config is not None:
        if config.platform not in SIM_PLATFORMS:     # (a simulator's name needs no further check)
            require_simulator(config.platform)
        if config.platform != compiled.platform:
            raise ValueCheckError(f"this program was compiled for {compiled.platform}; the config asks for "
                                  f"{config.platform}", hint="compile again with that config")
        return config                          # (the same platform, checked above)
    require_simulator(compiled.platform)
    return config or default_config()


def call_plans(compiled) -> list:
    """The entry's ParamPlans, worked out once per compiled program."""
    if compiled._plans is None:
        compiled._plans = plan_params(compiled.function)
    return compiled._plans


def _return_style(compiled, plans: list, n_args: int) -> bool:
    n_inputs = compiled._n_inputs
    if n_args == n_inputs and compiled.has_return:
        return True                              # (also when every parameter is an input)
    if n_args == len(plans):
        return False
    names = ", ".join(p.name for p in plans)
    style = f" in place, or its {n_inputs} inputs in return style" if compiled.has_return else ""
    raise TypeCheckError(f"'{compiled.function.name}' takes {len(plans)} arguments ({names}){style}"
                         f"{';' if style else ','} got {n_args}")


def _bind(compiled, args: list, config, worker, torch: bool):
    """(HostArgs, the simulator-side argument list) of one call."""
    plans = call_plans(compiled)
    return_style = _return_style(compiled, plans, len(args))
    strict = config.sim_strict
    if worker is None:
        host = HostArgs(plans, args, return_style=return_style, strict=strict, pool=compiled._pool, torch=torch,
                        defer_fill=True)          # (filled in `launch`, once the simulator program is known)
        return host, host.sim_args
    from pypto.runtime.worker import DeviceTensor
    given = iter(args)
    bound = [None if return_style and p.direction is ParamDirection.Out else next(given) for p in plans]
    host_plans = [p for p, a in zip(plans, bound) if not isinstance(a, DeviceTensor)]
    host_values = [a for p, a in zip(plans, bound) if not isinstance(a, DeviceTensor)
                   and not (return_style and p.direction is ParamDirection.Out)]
    host = HostArgs(host_plans, host_values, return_style=return_style, strict=strict, pool=compiled._pool,
                    torch=torch)
    host_iter = iter(host.sim_args)
    sim_args = [_device_arg(p, a, worker) if isinstance(a, DeviceTensor) else next(host_iter)
                for p, a in zip(plans, bound)]
    return host, sim_args


def _device_arg(plan, tensor, worker) -> np.ndarray:
    """A DeviceTensor argument: the worker's device memory itself (read-only for an In parameter)."""
    arr = tensor.device_array(worker)
    if plan.is_scalar:
        raise TypeCheckError(f"parameter '{plan.name}' is a scalar; got {tensor!r}")
    if arr.dtype != plan.dtype:
        raise TypeCheckError(f"parameter '{plan.name}' expects dtype {plan.dtype_name}, got {tensor!r}")
    if plan.static_shape is not None and arr.shape != plan.static_shape:
        raise TypeCheckError(f"parameter '{plan.name}' expects shape {list(plan.static_shape)}, got {tensor!r}")
    if plan.direction is ParamDirection.In:
        view = arr.view()
        view.flags.writeable = False
        return view
    return arr


# ------------------------------------------------------------------ 4. results into the Out buffers
def _returns_into_outputs(compiled, value, sim_args: list) -> None:
    """An in-place call's Out / InOut parameter receives what the entry returns under its name.

    Orchestration code may rebind an Out parameter to a fresh tensor (`out = pl.expand_clone(g, out)`):
    the returned array is then new memory, not the buffer the caller's array is written back from,
    so it is copied into that buffer here (before write-back, so a failure still changes nothing).
    """
    if not compiled.has_return or value is None:
        return
    ret_map = getattr(compiled, "_return_params", False)
    if ret_map is False:
        ret_map = compiled._return_params = _returned_params(compiled)
    if not ret_map:
        return
    values = value if isinstance(value, tuple) else (value,)
    directions = compiled.function.param_directions
    for j, got in zip(ret_map, values):
        buf = sim_args[j]
        if (directions[j] is ParamDirection.In or not isinstance(got, np.ndarray) or not isinstance(buf, np.ndarray)
                or got is buf or np.shares_memory(got, buf)):
            continue
        if got.shape != buf.shape:
            raise ValueCheckError(f"'{compiled.function.name}' returns a {list(got.shape)} tensor as its output "
                                  f"'{compiled.param_names[j]}', whose shape is {list(buf.shape)}")
        np.copyto(buf, got, casting="unsafe")


def _returns_own(compiled, plan) -> bool:
    """Whether a straight run of `plan` returns, for each parameter the entry returns under its name, that
    parameter's own buffer, so `_returns_into_outputs` has nothing to copy (worked out once per program)."""
    got = compiled.__dict__.get("_plan_returns_own")
    if got is None or got[0] is not plan:
        ret_map = getattr(compiled, "_return_params", False)
        if ret_map is False:
            ret_map = compiled._return_params = _returned_params(compiled)
        own = (not compiled.has_return or plan.returns is None or not ret_map
               or all(r == ("param", j) for r, j in zip(plan.returns, ret_map)))
        got = compiled.__dict__["_plan_returns_own"] = (plan, own)
    return got[1]


def _returned_params(compiled) -> Optional[tuple]:
    """Which parameter each returned value is: traced through the IR, else, for a value the user bound
    to an Out parameter's name (the parser renames a rebinding `out` to `out_1`), that parameter."""
    import re

    from pypto.ir.expr import Var
    from pypto.ir.stmt import ReturnStmt, flatten_to_stmts
    from pypto.runtime.sim.returns import return_param_map
    found = return_param_map(compiled.function, compiled.lowered)
    written = compiled.program.functions.get(compiled.entry) if compiled.program is not None else None
    if found is not None or written is None or len(written.params) != len(compiled.function.params):
        return found
    found = return_param_map(written, compiled.program)
    if found is not None:
        return found
    stmts = flatten_to_stmts(written.body)
    if not stmts or not isinstance(stmts[-1], ReturnStmt):
        return None
    by_name = {p.name_hint: i for i, p in enumerate(written.params)
               if written.param_directions[i] is not ParamDirection.In}
    out = []
    for v in stmts[-1].values:
        name = re.sub(r"_\d+$", "", v.name_hint) if isinstance(v, Var) else None
        if name not in by_name:
            return None
        out.append(by_name[name])
    return tuple(out)


# ------------------------------------------------------------------ 3. the scheduler loop
STRAIGHT_RUNS = True      # internal switch: tests compare straight runs with the general loop's


def run_ranks(sim, per_rank: list, *, world=None, schedule: str = "deterministic", seed: Optional[int] = None,
              window: int = 64, race_check: bool = True, recorder=None,
              watchdog_seconds: Optional[float] = None, busy: Optional[list] = None, known_bounds=None,
              planned: bool = False) -> list:
    """Run `per_rank[r]` = [(FunctionCode, args), ...] on rank r, all ranks under one loop.

    Returns, per rank, the results of its dispatches. Deterministic: the first runnable agent in
    round-robin order (agents within a rank, and ranks, rotate). Random: a seeded choice among
    every runnable agent. A rank starts its next dispatch once the previous one's tasks finished.
    `busy` (a list, for benchmark) receives per rank [[busy s, start, end], ...] per dispatch: the time
    spent stepping that dispatch's agents, and the perf_counter window from its start to its last step.
    `known_bounds` (one rank): a function giving the byte bounds of its arguments (HostArgs.bounds).
    `planned` (one rank): the arguments are a chip call's bound buffers (none aliases another that a task
    writes), so an orchestration with a launch plan submits its tasks from it (pypto.runtime.sim.launch_plan).
    (`launch` runs a chip call whose plan never blocks without this loop: `_run_straight`.)
    """
    n = len(per_rank)
    runs = []
    for r in range(n):
        # one rank keeps the plain seed (a chip call); rank r of a world gets its own stream
        rank_seed = seed if n == 1 or seed is None else seed * 7919 + r
        # the race detector checks a chip's task graph (the ranks of a world also sync through signals)
        run = Run(sim, machine_for(sim.platform, r), schedule=schedule, seed=rank_seed, window=window,
                  race_check=race_check and world is None, known_bounds=known_bounds if n == 1 else None)
        run.world, run.rank, run.recorder = world, r, recorder
        if busy is not None:
            run.busy = []
            busy.append(run.busy)
        dispatches = per_rank[r]
        name = f"host orchestrator ({dispatches[0][0].name})" if n == 1 and dispatches else \
            f"rank {r} host orchestrator"
        run.host = Agent(name, _rank_host(run, dispatches, planned and n == 1 and world is None), None, None,
                         dispatches[0][0] if dispatches else None)
        run.agents.append(run.host)
        runs.append(run)
    rng = None
    if schedule == "random":
        rng = runs[0].random if n == 1 else random.Random(seed if seed is not None else 0)
    # overflow / NaN are data, not warnings; no automatic collection while tasks pile up (gc_pause)
    with np.errstate(all="ignore"), watching(watchdog_seconds) as dog, collections_paused():
        return _step_agents(runs, [None] * n, rng, dog, busy)


def _straight_plan(sim, code, window: int):
    """The launch plan of a chip call's dispatch when it can run straight (its kernels never block, it fits the
    task window), else None. The caller checks the rest: a chip call on the deterministic schedule with its own
    bound buffers (no ChipWorker), neither timed nor recorded."""
    if not STRAIGHT_RUNS:
        return None
    plan = launch_plan(sim, code)
    return plan if plan is not None and plan.never_blocks and plan.fits(window) else None


def _run_straight(sim, code, plan, args: list, *, window: int, race_check: bool, known_bounds) -> list:
    """One dispatch of a launch plan whose kernels never block (LaunchPlan.never_blocks), without the agent
    loop: the general loop would step the host agent once (it replays the plan), then start the ready tasks,
    each kernel running to its end when placed, and find nothing left to step. This does the same steps in
    the same order through the same Run methods — the same task ids, edges, cores, race records and errors
    (the host's under its agent name) — so only the loop's bookkeeping is skipped. A kernel loop still
    ticks the call's watchdog (the one in force: launch's); a kernel that deferred its completion (pld.system.defer_wait) leaves an
    agent behind, and the general loop takes the run from there."""
    race_check = race_check and len(plan.templates) > 1      # (a race needs two tasks: one keeps no records)
    machine = machine_for(sim.platform, 0)
    run = plan.spare_run                      # the last straight run's Run, on this thread's machine: reset
    if run is not None and run.machine is machine:
        plan.spare_run = None
        run.restart(window, race_check, known_bounds)
    else:
        run = Run(sim, machine, window=window, race_check=race_check, known_bounds=known_bounds)
    dog = current_watchdog()
    with np.errstate(all="ignore"), collections_paused():
        try:
            value = plan.replay(run, args)
        except BaseException as e:
            raise run.located(e, f"host orchestrator ({code.name})")
        try:
            run.start_ready()
        except WatchdogExpired as e:           # a kernel that runs to its end when started
            raise _livelock([run], dog, None, e.span, e.message) from None
        if run.agents or run.ready or run.live:
            return _step_agents([run], [[value]], None, dog, None)
        if run.race is not None:               # the dispatch's race check
            run.race.check()
    run.forget_dispatch()                      # kept for the next straight run of the plan (Run.restart)
    plan.spare_run = run
    return [[value]]


def _step_agents(runs: list, results: list, rng, dog, busy: Optional[list]) -> list:
    """The scheduler loop: step runnable agents (the first in round-robin order, or `rng`'s pick) until none
    is left, starting ready tasks between steps; `results[r]` receives rank r's host agent's value."""
    n = len(runs)
    # a progress line once a run takes > 2 s: the terminal is asked only once a run is long enough to tick
    progress, steps, started = None, 0, time.perf_counter()
    dog_steps = 0
    while True:
        collect_if_due()
        dog_steps += 1
        if dog is not None and dog_steps % 256 == 0 and dog.expired():
            raise _livelock(runs, dog, None, None)
        try:
            for run in runs:
                run.start_ready()
        except WatchdogExpired as e:           # a kernel that runs to its end when started
            raise _livelock(runs, dog, None, e.span, e.message) from None
        candidates = [(run, a) for run in runs for a in run.agents if a.block is None or a.block.ready()]
        steps += 1
        if steps % TICK_STEPS == 0:
            if progress is None:
                progress = RunProgress.for_terminal(runs, started) or False
            if progress:
                progress.tick()
        if not candidates:
            if progress:
                progress.close()
            for run in runs:
                if run.agents or run.ready or run.live:
                    raise _deadlock(runs)
            for run in runs:
                run.dispatch_done()          # the last dispatch's race check
            return results
        if rng is not None:
            run, agent = rng.choice(candidates)
        else:
            run, agent = candidates[0]
            run.agents.remove(agent)
            run.agents.append(agent)
            if n > 1:
                runs.remove(run)             # rotate ranks too, so no rank starves another
                runs.append(run)
        if busy is not None:
            step_start = time.perf_counter()
        try:
            blk = agent.gen.send(None)
        except StopIteration as stop:
            run.agents.remove(agent)
            if agent is run.host:
                results[run.rank] = stop.value
            else:
                run.lane_done(agent.task)
            continue
        except WatchdogExpired as e:
            raise _livelock(runs, dog, agent, e.span) from None
        except BaseException as e:
            raise run.located(e, _label(run, agent, n))
        finally:
            if busy is not None and run.busy:     # the step belongs to the rank's current dispatch
                record, now = run.busy[-1], time.perf_counter()
                record[0] += now - step_start
                record[1] = min(record[1], step_start)   # the step that began the dispatch counts whole
                record[2] = now
        agent.block = blk


def _rank_host(run: Run, dispatches: list, planned: bool = False):
    """A rank's host agent: its dispatched Orchestration functions, one after another. `planned`: the
    arguments are a chip call's own buffers, so an orchestration with a LaunchPlan replays it."""
    ctx = None
    results = []
    for i, (code, args) in enumerate(dispatches):
        if i and (run.live or run.ready):      # a rank finishes one dispatch before the next starts
            prev = dispatches[i - 1][0].name
            yield Block(lambda: not run.live and not run.ready, "end of dispatch", f"tasks of {prev} still running")
        if i:
            run.dispatch_done()
        if run.busy is not None:                # benchmark: a record per dispatch (run_ranks adds the steps)
            run.busy.append([0.0, time.perf_counter(), 0.0])
        if run.recorder is not None:            # dfx_outputs/rank{r}/d{k}: the tasks from here on are dispatch k
            run.recorder.dispatch_started(run, code.name)
        plan = launch_plan(run.program, code) if planned and run.recorder is None else None
        if plan is not None and plan.fits(run.window):
            results.append(plan.replay(run, args))
            continue
        if ctx is None:
            ctx = HostContext(run)
        results.append((yield from code.fn(ctx, *args)))
    return results


def _label(run: Run, agent: Agent, n: int) -> str:
    return agent.name if n == 1 or agent is run.host else f"rank {run.rank} {agent.name}"


def _generated_line_span(by_filename: dict, tb):
    """The user's span of the innermost generated-code line in a traceback (None if there is none)."""
    span = None
    while tb is not None:
        code = by_filename.get(tb.tb_frame.f_code.co_filename)
        if code is not None:
            span = code.lines.get(tb.tb_lineno, ("", span))[1] or span
        tb = tb.tb_next
    return span


def _livelock(runs: list, dog, spinning, span, started: str = "") -> SimulationError:
    """The watchdog's error: what every agent was doing when the run's time budget ran out."""
    n = len(runs)
    lines = [f"  {started.split(': loop still running')[0]}: running a loop"
             + (f" at {span.filename}:{span.line}" if span is not None and span.is_known() else "")] if started else []
    for run in sorted(runs, key=lambda r: r.rank):
        for a in run.agents:
            if a is spinning:
                where = f" at {span.filename}:{span.line}" if span is not None and span.is_known() else ""
                lines.append(f"  {_label(run, a, n)}: running a loop{where}")
            else:
                blk = a.block
                lines.append(f"  {_label(run, a, n)}: {blk.describe() if blk else 'runnable'}")
    first = span if span is not None else next((a.block.span for run in runs for a in run.agents
                                                 if a.block is not None and a.block.span is not None), None)
    return SimulationError(f"the run made no end within its {dog.seconds:g} s watchdog budget (a loop that never "
                           "ends?)\n" + "\n".join(lines), first,
                           hint="check the loop's condition and bounds; a long run can raise the budget with "
                                "RunConfig(sim_watchdog_seconds=...)")


def _site_span(task):
    span = getattr(getattr(task, "site", None), "span", None)
    return span if span is not None and span.is_known() else None


def _deadlock(runs: list) -> DeadlockError:
    n = len(runs)
    lines, first = [], None
    for run in sorted(runs, key=lambda r: r.rank):
        where = f"rank {run.rank}: " if n > 1 else ""
        for a in run.agents:
            blk = a.block
            lines.append(f"  {_label(run, a, n)}: {blk.describe() if blk else 'not runnable'}")
            if first is None and blk is not None and blk.span is not None:
                first = blk.span
        waiting = [t for t in run.live.values() if t.deps_left]
        if waiting:
            lines.append(f"  {where}{len(waiting)} task(s) waiting for dependencies: "
                         + ", ".join(t.name for t in waiting[:8]) + (" ..." if len(waiting) > 8 else ""))
        if run.ready:
            lines.append(f"  {where}{len(run.ready)} ready task(s) with no free core: "
                         + ", ".join(t.name for t in run.ready[:8]))
        if first is None:                 # no blocked op to point at: the call of a task that cannot start
            first = next((sp for t in [*waiting, *run.ready] if (sp := _site_span(t)) is not None), None)
    return DeadlockError("deadlock: no agent can make progress\n" + "\n".join(lines), first,
                         hint="a blocked op waits for data, a slot or a signal that nothing will provide "
                              "(e.g. a pld.system.wait for a notify that never comes)")
