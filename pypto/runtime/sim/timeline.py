"""A timeline of a simulated run: what each core did, and when, under a documented cost model.

The simulator computes values, not time. When a run asks for a swimlane
(`RunConfig(enable_chip_swimlane=True)`), every op is costed with the platform's `CostModel`
(pypto/ir/platform.py) and placed on a virtual clock per core lane: a task starts when its
dependencies ended, its core is free and the host submitted it; a `tpop` cannot end before the
matching `tpush`; a `tpush` on a full ring waits for the `tfree` that released the slot. The
result is an estimate of the schedule's shape (overlap, stalls, bubbles), not a measurement.

    rec = TimelineRecorder(platform)        # the scheduler calls it (Run.recorder); zero cost when None
    rec.chrome_trace()                      # Chrome trace event JSON (loads in ui.perfetto.dev)
    rec.dependency_graph()                  # {"tasks": [...], "edges": [...]}  (deps.json)

Tracks: one process per rank, one thread per core (AIC n, AIV n) plus the host orchestrator.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pypto.env import swimlane_forced
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.pipes import find_ring
from pypto.runtime.sim.values import TileValue

PUSH_OPS = {"tile.tpush_to_aiv": "c2v", "tile.tpush_to_aic": "v2c"}
POP_OPS = {"tile.tpop_from_aic": "c2v", "tile.tpop_from_aiv": "v2c"}
FREE_OPS = {"system.tfree_to_aic": "c2v", "system.tfree_to_aiv": "v2c"}
SIGNAL_OPS = frozenset({"pld.system.notify", "pld.system.wait"})
HOST_TID = 0


@dataclass
class _Lane:
    """One kernel lane of a task on one core: its clock and the op slices it recorded."""
    task: object
    core: object
    name: str
    start: float
    clock: float
    ops: list = field(default_factory=list)


@dataclass
class _TaskTimes:
    submit: float = 0.0
    start: Optional[float] = None
    end: Optional[float] = None
    deps: list = field(default_factory=list)       # ids of the tasks this one waited for
    lanes: list = field(default_factory=list)
    cores: dict = field(default_factory=dict)      # simulated core → the core the timeline shows it on


def _bytes(value) -> int:
    if isinstance(value, TileValue):
        return int(np.prod(value.valid)) * value.data.itemsize if value.valid else value.data.nbytes
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    return 0


def _shape(value):
    if isinstance(value, TileValue):
        return list(value.valid)
    if isinstance(value, np.ndarray):
        return list(value.shape)
    return None


def op_cost(cost, name: str, out, args: tuple, kwargs: dict) -> tuple:
    """(nanoseconds, category, bytes moved or touched) of one op under `cost` (a CostModel)."""
    tiles = [a for a in args if isinstance(a, TileValue)]
    if name in ("tile.load", "tile.store", "tile.mgather", "tile.mscatter") or name.startswith("tile.prefetch"):
        writes_gm = name in ("tile.store", "tile.mscatter")     # the bytes of the tile sent out, else received
        nbytes = (_bytes(tiles[0]) if tiles else 0) if writes_gm else _bytes(out)
        return cost.dma_latency_ns + nbytes / cost.dma_bytes_per_ns, "dma", nbytes
    if name in PUSH_OPS or name in POP_OPS:
        nbytes = _bytes(tiles[0] if tiles else out)
        return cost.pipe_latency_ns + nbytes / cost.pipe_bytes_per_ns, "pipe", nbytes
    if name.startswith("tile.matmul") or name.startswith("tile.gemv"):
        if len(tiles) >= 2 and tiles[0].data.ndim == 2 and tiles[-1].data.ndim == 2:
            lhs, rhs = (tiles[-2], tiles[-1]) if name.endswith("_acc") and len(tiles) >= 3 else (tiles[0], tiles[1])
            m, k = lhs.valid
            n = rhs.valid[1]
            width = lhs.data.itemsize
            rate = cost.cube_flops_per_ns * {1: 2.0, 2: 1.0}.get(width, 0.25)
            return 2.0 * m * n * k / rate + cost.vector_issue_ns, "cube", _bytes(lhs) + _bytes(rhs)
        return cost.vector_issue_ns, "cube", 0
    if name in ("tile.move", "tile.extract", "tile.insert"):
        nbytes = _bytes(out) or (_bytes(tiles[0]) if tiles else 0)
        return cost.vector_issue_ns + nbytes / cost.move_bytes_per_ns, "move", nbytes
    if isinstance(out, TileValue):
        nbytes = max([_bytes(out)] + [_bytes(t) for t in tiles])
        return cost.vector_issue_ns + nbytes / cost.vector_bytes_per_ns, "vector", nbytes
    return cost.scalar_op_ns, "scalar", 0


class TimelineRecorder:
    def __init__(self, platform):
        self.platform = platform
        self.cost = platform.cost
        self.tasks: dict = {}          # (rank, task number) → _TaskTimes
        self.names: dict = {}          # (rank, task number) → kernel name
        self.numbers: dict = {}        # (id(run), task id) → the task's number on the timeline
        self.next_number: dict = {}    # rank → the next task number
        self.phases: dict = {}         # id(run) → run
        self.lanes: dict = {}          # id(ctx) → _Lane
        self.finished_lanes: list = []
        self.core_free: dict = {}      # (rank, core name) → virtual ns the core is free again
        self.host_clock: dict = {}     # rank → ns
        self.host_ops: list = []       # (rank, name, ts, dur, args)
        self.pushes: dict = {}         # id(ring) → {producer lane: [end times]}
        self.pops: dict = {}           # id(ring) → {consumer lane: count}
        self.frees: dict = {}          # id(ring) → {consumer lane: [times]}
        self.flows: list = []          # (cat, (rank, tid, ts), (rank, tid, ts), name)
        self.signals: dict = {}        # signal cell address → (time of its last notify, flow source)
        self.counters: list = []       # (rank, name, ts, value)
        self.generated_files: dict = {}   # filename → FunctionCode (op → source line)
        self.dispatch_of: dict = {}    # (rank, task number) → the rank's dispatch (0, 1, ... over the call) it ran in
        self.dispatch_names: dict = {}  # (rank, dispatch) → the dispatched orchestration function
        self._dispatches: dict = {}    # rank → dispatches started so far

    def dispatch_started(self, run, name: str) -> None:
        """A rank starts its next dispatch: its tasks from now on belong to it (dfx_outputs/rank{r}/d{k})."""
        k = self._dispatches.get(run.rank, 0)
        self._dispatches[run.rank] = k + 1
        self.dispatch_names[(run.rank, k)] = name

    # ------------------------------------------------------------------ scheduler hooks
    def submitted(self, run, task) -> None:
        rank = run.rank
        number = self._num(run, task.id)              # first: a new phase moves the host clock
        t = self.host_clock.get(rank, 0.0) + self.cost.host_submit_ns
        self.host_clock[rank] = t
        deps = [self._num(run, o.id) for o in run.live.values() if o.dependents and o.dependents[-1] is task]
        self.tasks[(rank, number)] = _TaskTimes(submit=t, deps=deps)
        self.names[(rank, number)] = task.code.name
        self.dispatch_of[(rank, number)] = self._dispatches.get(rank, 1) - 1
        self.host_ops.append((rank, f"submit {task.code.name} #{number}", t - self.cost.host_submit_ns,
                              self.cost.host_submit_ns, {"task": number}))

    def _num(self, run, task_id: int) -> int:
        """The task's number on the timeline: a host orchestrator that runs in phases makes one Run per
        phase (each numbering its tasks from 0); the timeline numbers a rank's tasks across phases, and
        a phase starts after everything before it ended."""
        key = (id(run), task_id)
        n = self.numbers.get(key)
        if n is None:
            if id(run) not in self.phases:
                self.phases[id(run)] = run             # kept alive, so its id is not reused
                ends = [t.end for (r, _), t in self.tasks.items() if r == run.rank and t.end is not None]
                self.host_clock[run.rank] = max([self.host_clock.get(run.rank, 0.0)] + ends)
            n = self.numbers[key] = self.next_number.get(run.rank, 0)
            self.next_number[run.rank] = n + 1
        return n

    def _times(self, run, task) -> _TaskTimes:
        key = (run.rank, self._num(run, task.id))
        times = self.tasks.get(key)
        if times is None:                       # a block of an Spmd launch, or a Group member: its parent's times
            parent = self.tasks.get((run.rank, self._num(run, task.parent.id))) if task.parent is not None else None
            times = self.tasks[key] = _TaskTimes(submit=parent.submit if parent else 0.0,
                                                 deps=list(parent.deps) if parent else [])
            self.names[key] = task.code.name
            self.dispatch_of[key] = self._dispatches.get(run.rank, 1) - 1
        return times

    def _ready_at(self, run, times: _TaskTimes) -> float:
        ready = times.submit + self.cost.task_launch_ns
        for d in times.deps:
            end = self.tasks[(run.rank, d)].end
            if end is not None:
                ready = max(ready, end)
        return ready

    def lane_started(self, run, ctx, task, code) -> None:
        """A kernel lane begins (Group and Spmd wrappers have no core time of their own).

        The simulator runs a kernel without blocking ops to completion as soon as it is placed, so it
        reuses the lowest free core; the timeline instead places each task on the core (or cluster) of
        its kind that is free first in estimated time, as the chip's dispatcher would."""
        times = self._times(run, task)
        if times.start is None:
            ready = self._ready_at(run, times)
            times.cores = self._place(run, task.cores, ready)
            times.start = max([ready] + [self._free(run, c) for c in times.cores.values()])
        core = times.cores.get(ctx.core) if ctx.core is not None else None
        if code.func.func_type.name in ("Group", "Spmd") or core is None:
            self.lanes[id(ctx)] = _Lane(task, None, code.name, times.start, times.start)
            return
        start = max(times.start, self._free(run, core))
        lane = _Lane(task, core, code.name, start, start)
        self.lanes[id(ctx)] = lane
        times.lanes.append(lane)

    def _free(self, run, core) -> float:
        return self.core_free.get((run.rank, core.name), 0.0)

    def _place(self, run, cores: list, ready: float) -> dict:
        """{simulated core: timeline core}: the same shape of cores (one core, or the same members of one
        cluster), wherever that shape is free earliest (ties: the lowest index)."""
        if not cores:
            return {}
        machine = run.machine
        if len(cores) == 1:
            core = cores[0]
            pool = machine.aic_cores if core.kind == "AIC" else machine.aiv_cores
            best = min(pool, key=lambda c: (max(ready, self._free(run, c)), c.index))
            return {core: best}

        def member(cl, core):
            return cl.aic if core.kind == "AIC" else cl.aiv[core.lane]

        best = min(machine.clusters, key=lambda cl: (max([ready] + [self._free(run, member(cl, c)) for c in cores]),
                                                     cl.index))
        return {c: member(best, c) for c in cores}

    def task_finished(self, run, task) -> None:
        times = self._times(run, task)
        end = max([times.start or 0.0] + [lane.clock for lane in times.lanes])
        times.end = end
        for core in times.cores.values():
            self.core_free[(run.rank, core.name)] = end
        if task.parent is not None:             # an Spmd block: the launch ends with its last block
            parent = self._times(run, task.parent)
            parent.lanes.extend(times.lanes)

    # ------------------------------------------------------------------ op hook
    def op(self, ctx, name: str, out, args: tuple, kwargs: dict, result, frame) -> None:
        lane = self.lanes.get(id(ctx))
        line = self._source_line(frame)
        if lane is None:                        # a host op (orchestration)
            rank = getattr(ctx.run, "rank", 0)
            t = self.host_clock.get(rank, 0.0)
            self.host_clock[rank] = t + self.cost.scalar_op_ns
            self.host_ops.append((rank, name, t, self.cost.scalar_op_ns, {"line": line}))
            return
        dur, cat, nbytes = op_cost(self.cost, name, out if out is not None else result, args, kwargs)
        begin = lane.clock
        rank = ctx.run.rank
        if name in PUSH_OPS or name in POP_OPS or name in FREE_OPS:
            begin = self._pipe(ctx, name, lane, begin, dur, rank, kwargs.get("id") or 0)
        elif name in SIGNAL_OPS:
            begin = self._signal(ctx, name, lane, begin, dur, rank, args)
        shape = _shape(result) or _shape(out) or next((_shape(a) for a in args if _shape(a)), None)
        info = {"line": line, "bytes": nbytes} if line else {"bytes": nbytes}
        if shape:
            info["shape"] = shape
        lane.ops.append((name, cat, begin, dur, info))
        lane.clock = begin + dur

    def _pipe(self, ctx, name: str, lane: _Lane, begin: float, dur: float, rank: int, pipe: int) -> float:
        direction = PUSH_OPS.get(name) or POP_OPS.get(name) or FREE_OPS[name]
        ring = find_ring(ctx, (direction, pipe))
        if ring is None:
            return begin
        key = id(ring)
        label = f"{direction.upper()} pipe {pipe} (cluster {ctx.cluster.index})"
        sub = int(getattr(ctx, "subblock_idx", 0) or 0)
        tid = self._tid(lane.core)
        if name in PUSH_OPS:
            me = sub if ring.producers > 1 else 0
            mine = self.pushes.setdefault(key, {}).setdefault(me, [])
            k = len(mine)
            if k >= ring.slot_num:               # the slot this push fills must have been freed
                for frees in self.frees.get(key, {}).values():
                    if len(frees) > k - ring.slot_num:
                        begin = max(begin, frees[k - ring.slot_num])
            mine.append((begin + dur, (rank, tid, begin + dur)))
            self._occupancy(rank, label, key, begin + dur)
        elif name in POP_OPS:
            me = sub if ring.consumers > 1 else 0
            counts = self.pops.setdefault(key, {})
            k = counts.get(me, 0)
            counts[me] = k + 1
            for lst in self.pushes.get(key, {}).values():
                if len(lst) > k:
                    t_push, src = lst[k]
                    begin = max(begin, t_push)
                    self.flows.append(("pipe", src, (rank, tid, begin), f"{label} slot {k % ring.slot_num}"))
            self._occupancy(rank, label, key, begin + dur)
        else:
            me = sub if ring.consumers > 1 else 0
            self.frees.setdefault(key, {}).setdefault(me, []).append(begin + dur)
            self._occupancy(rank, label, key, begin + dur)
        return begin

    def _signal(self, ctx, name: str, lane: _Lane, begin: float, dur: float, rank: int, args: tuple) -> float:
        """notify stamps the signal cell; a wait cannot end before the last notify of its cell."""
        try:
            if name == "pld.system.notify":
                target, peer, offsets = args[0], args[1], args[2]
                cell = _cell_address(ctx.run.world.peer_view(target, peer, name), offsets)
                self.signals[cell] = (begin + dur, (rank, self._tid(lane.core), begin + dur))
                return begin
            cell = _cell_address(args[0], args[1])
        except Exception:                       # the op itself validated its operands; never fail here
            return begin
        stamp = self.signals.get(cell)
        if stamp is not None:
            begin = max(begin, stamp[0])
            self.flows.append(("signal", stamp[1], (rank, self._tid(lane.core), begin), "signal"))
        return begin

    def _occupancy(self, rank: int, label: str, key, ts: float) -> None:
        pushed = max((len(v) for v in self.pushes.get(key, {}).values()), default=0)
        freed = min((len(v) for v in self.frees.get(key, {}).values()), default=0)
        self.counters.append((rank, f"{label} slots in use", ts, max(0, pushed - freed)))

    def _source_line(self, frame) -> str:
        if frame is None:
            return ""
        code = self.generated_files.get(frame.f_code.co_filename)
        if code is None:
            return ""
        what, span = code.lines.get(frame.f_lineno, ("", None))
        return str(span) if span is not None and span.is_known() else ""

    @staticmethod
    def _tid(core) -> int:
        if core is None:
            return HOST_TID
        return 1 + (3 * core.cluster.index + (0 if core.kind == "AIC" else 1 + core.lane))

    # ------------------------------------------------------------------ output
    def chrome_trace(self) -> dict:
        """The run as Chrome trace events (timestamps in microseconds)."""
        events: list = []
        us = 1e-3
        ranks = sorted({r for r, _ in self.tasks} | set(self.host_clock) | {0})
        cores: dict = {}
        for times in self.tasks.values():
            for lane in times.lanes:
                cores.setdefault(lane.core.machine, set()).add(lane.core)
        for rank in ranks:
            events.append({"ph": "M", "name": "process_name", "pid": rank, "tid": HOST_TID,
                           "args": {"name": f"rank {rank} ({self.platform.name}sim, estimated time)"}})
            events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": HOST_TID,
                           "args": {"name": "host orchestrator"}})
        named = set()
        for (rank, tid_task), times in sorted(self.tasks.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            for lane in times.lanes:
                tid = self._tid(lane.core)
                if (rank, tid) not in named:
                    named.add((rank, tid))
                    label = f"AIC {lane.core.cluster.index}" if lane.core.kind == "AIC" else \
                        f"AIV {lane.core.index} (cluster {lane.core.cluster.index} lane {lane.core.lane})"
                    events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": tid, "args": {"name": label}})
                    events.append({"ph": "M", "name": "thread_sort_index", "pid": rank, "tid": tid,
                                   "args": {"sort_index": tid}})
                end = max(lane.clock, lane.start)
                events.append({"ph": "X", "name": f"{lane.name} #{tid_task}", "cat": "task", "pid": rank, "tid": tid,
                               "ts": lane.start * us, "dur": (end - lane.start) * us,
                               "args": {"task": tid_task, "kernel": lane.name, "depends_on": times.deps}})
                for name, cat, begin, dur, info in lane.ops:
                    events.append({"ph": "X", "name": name, "cat": cat, "pid": rank, "tid": tid,
                                   "ts": begin * us, "dur": dur * us, "args": info})
        for rank, name, ts, dur, info in self.host_ops:
            events.append({"ph": "X", "name": name, "cat": "host", "pid": rank, "tid": HOST_TID,
                           "ts": ts * us, "dur": dur * us, "args": info})
        flow_id = 0
        for (rank, task_id), times in sorted(self.tasks.items()):
            if not times.lanes:
                continue
            dst = times.lanes[0]
            for d in times.deps:
                src_times = self.tasks.get((rank, d))
                if src_times is None or not src_times.lanes or src_times.end is None:
                    continue
                src = max(src_times.lanes, key=lambda ln: ln.clock)
                flow_id += 1
                self._flow(events, flow_id, "dependency", f"#{d} -> #{task_id}",
                           (rank, self._tid(src.core), max(src.start, src.clock - 1e-3)),
                           (rank, self._tid(dst.core), dst.start))
        for cat, src, dst, name in self.flows:
            flow_id += 1
            self._flow(events, flow_id, cat, name, src, (dst[0], dst[1], dst[2]))
        for rank, name, ts, value in sorted(self.counters, key=lambda c: c[2]):
            events.append({"ph": "C", "name": name, "pid": rank, "tid": HOST_TID, "ts": ts * us,
                           "args": {"slots": value}})
        return {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"generator": "pypto simulator", "time": "estimated by pypto.ir.platform.CostModel",
                              "platform": self.platform.name}}

    @staticmethod
    def _flow(events: list, fid: int, cat: str, name: str, src: tuple, dst: tuple) -> None:
        us = 1e-3
        events.append({"ph": "s", "id": fid, "name": name, "cat": cat, "pid": src[0], "tid": src[1],
                       "ts": src[2] * us})
        events.append({"ph": "f", "bp": "e", "id": fid, "name": name, "cat": cat, "pid": dst[0], "tid": dst[1],
                       "ts": dst[2] * us})

    def _selected(self, dispatch) -> list:
        """The ((rank, task), times) of the run, or of one (rank, dispatch) only."""
        items = sorted(self.tasks.items())
        if dispatch is None:
            return items
        return [(key, times) for key, times in items if (key[0], self.dispatch_of.get(key, 0)) == dispatch]

    def dispatches(self) -> list:
        """Every (rank, dispatch) of the run that submitted tasks."""
        return sorted({(r, self.dispatch_of.get((r, t), 0)) for r, t in self.tasks})

    def dependency_graph(self, dispatch=None) -> dict:
        """The task graph of the run (deps.json): each task with its kernel, times and predecessors
        (`dispatch=(rank, k)`: of that dispatch only)."""
        items = self._selected(dispatch)
        tasks = [{"rank": r, "task": t, "kernel": self.names.get((r, t)), "start_ns": times.start,
                  "end_ns": times.end, "depends_on": times.deps}
                 for (r, t), times in items]
        edges = [{"rank": r, "from": d, "to": t} for (r, t), times in items for d in times.deps]
        return {"tasks": tasks, "edges": edges}

    def lane_records(self, dispatch=None) -> list:
        """One record per kernel lane (task, kernel, core, estimated start / end): a dispatch's swimlane."""
        return [{"rank": r, "task": t, "kernel": lane.name, "core": f"{lane.core.kind} {lane.core.index}",
                 "start_ns": lane.start, "end_ns": max(lane.clock, lane.start), "depends_on": times.deps}
                for (r, t), times in self._selected(dispatch) for lane in times.lanes]

    def scope_stats(self, dispatch=None) -> dict:
        """Per scope (the kernel a `pl.at` region became): tasks launched and their estimated times."""
        out: dict = {}
        for (rank, _n), times in self._selected(dispatch):
            if times.end is None or times.start is None:
                continue
            name = self.names.get((rank, _n))
            row = out.setdefault(name, {"tasks": 0, "total_ns": 0.0, "max_ns": 0.0, "ranks": set()})
            row["tasks"] += 1
            row["total_ns"] += times.end - times.start
            row["max_ns"] = max(row["max_ns"], times.end - times.start)
            row["ranks"].add(rank)
        for row in out.values():
            row["mean_ns"] = row["total_ns"] / row["tasks"]
            row["ranks"] = sorted(row["ranks"])
        return out

    def total_ns(self) -> float:
        ends = [t.end for t in self.tasks.values() if t.end is not None]
        return max(ends, default=0.0)


def _cell_address(arr: np.ndarray, offsets) -> int:
    """The byte address of one signal cell (the same cell seen from any rank's view of the window)."""
    idx = tuple(int(o) for o in offsets)
    return arr.__array_interface__["data"][0] + sum(i * st for i, st in zip(idx, arr.strides))


def wants_timeline(config) -> bool:
    """A run records a timeline when its config (or PYPTO_CHIP_SWIMLANE=1) asks for a swimlane, a task graph
    or scope statistics."""
    return bool(config.enable_chip_swimlane or config.enable_dep_gen or config.enable_scope_stats
                or swimlane_forced())


def write_outputs(recorder: TimelineRecorder, compiled, config) -> dict:
    """Write dfx_outputs/swimlane.json (deps.json with enable_dep_gen, scope_stats.json with
    enable_scope_stats) under the program's build
    directory (one made for it when it has none; later runs overwrite the files); the paths by kind."""
    import json

    from pypto.runtime.config import new_build_dir
    base = getattr(compiled, "output_dir", None) or getattr(compiled, "_timeline_dir", None)
    if base is None:                             # one directory per compiled program: the last run's files
        base = compiled._timeline_dir = new_build_dir(getattr(compiled.lowered, "name", None) or "program")
    out = base / "dfx_outputs"
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    if config.enable_chip_swimlane or swimlane_forced():
        paths["swimlane"] = out / "swimlane.json"
        paths["swimlane"].write_text(json.dumps(recorder.chrome_trace()))
    if config.enable_dep_gen:
        paths["deps"] = out / "deps.json"
        paths["deps"].write_text(json.dumps(recorder.dependency_graph(), indent=1))
    if config.enable_scope_stats:
        paths["scope_stats"] = out / "scope_stats.json"
        paths["scope_stats"].write_text(json.dumps(recorder.scope_stats(), indent=1))
    if getattr(compiled, "host_function", None) is not None:
        paths["dispatches"] = _write_per_dispatch(recorder, out, config)
    return paths


def _write_per_dispatch(recorder: TimelineRecorder, out, config) -> dict:
    """A distributed run's artifacts per dispatch, as the reference lays them out: rank{r}/d{k}/ (the rank's
    k-th dispatch of the call) with deps.json (with dep_gen, or with a swimlane, which needs the graph),
    chip_swimlane_records.json (with a swimlane) and scope_stats/scope_stats.jsonl. Directories of an
    earlier, larger run are removed first, so the folder describes this run only."""
    import json
    import shutil
    for stale in out.glob("rank*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
    swimlane = config.enable_chip_swimlane or swimlane_forced()
    written: dict = {}
    for rank, k in recorder.dispatches():
        folder = out / f"rank{rank}" / f"d{k}"
        folder.mkdir(parents=True, exist_ok=True)
        if config.enable_dep_gen or swimlane:
            (folder / "deps.json").write_text(json.dumps(recorder.dependency_graph((rank, k)), indent=1))
        if swimlane:
            (folder / "chip_swimlane_records.json").write_text(json.dumps(
                {"dispatch": recorder.dispatch_names.get((rank, k)), "records": recorder.lane_records((rank, k))},
                indent=1))
        if config.enable_scope_stats:
            (folder / "scope_stats").mkdir(exist_ok=True)
            lines = [json.dumps({"scope": name, **row}) for name, row in recorder.scope_stats((rank, k)).items()]
            (folder / "scope_stats" / "scope_stats.jsonl").write_text("\n".join(lines) + "\n")
        written[(rank, k)] = folder
    return written


def traced_ops(ops: dict) -> dict:
    """SIM_OPS with every op reporting to its run's recorder after it completed (a Block is not completion)."""
    out = {}
    for name, fn in ops.items():
        out[name] = _traced(name, fn)
    return out


def _traced(name: str, fn):
    def op(ctx, out, *args, **kwargs):
        result = fn(ctx, out, *args, **kwargs)
        if result.__class__ is Block:
            return result
        recorder = getattr(getattr(ctx, "run", None), "recorder", None)
        if recorder is not None:
            recorder.op(ctx, name, out, args, kwargs, result, sys._getframe(1))
        return result
    op.__name__ = getattr(fn, "__name__", name)
    op.__wrapped__ = fn
    for attr, value in getattr(fn, "__dict__", {}).items():   # may_block and other markers codegen reads
        setattr(op, attr, value)
    return op
