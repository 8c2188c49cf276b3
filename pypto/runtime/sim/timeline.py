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

from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.pipes import find_ring
from pypto.runtime.sim.values import TileValue

PUSH_OPS = {"tile.tpush_to_aiv": "c2v", "tile.tpush_to_aic": "v2c"}
POP_OPS = {"tile.tpop_from_aic": "c2v", "tile.tpop_from_aiv": "v2c"}
FREE_OPS = {"system.tfree_to_aic": "c2v", "system.tfree_to_aiv": "v2c"}
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
        nbytes = _bytes(out) if name == "tile.load" or out is not None and name != "tile.store" else \
            _bytes(tiles[0]) if tiles else 0
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
        self.tasks: dict = {}          # (rank, task id) → _TaskTimes
        self.names: dict = {}          # (rank, task id) → kernel name
        self.lanes: dict = {}          # id(ctx) → _Lane
        self.finished_lanes: list = []
        self.core_free: dict = {}      # (rank, core name) → virtual ns the core is free again
        self.host_clock: dict = {}     # rank → ns
        self.host_ops: list = []       # (rank, name, ts, dur, args)
        self.pushes: dict = {}         # id(ring) → {producer lane: [end times]}
        self.pops: dict = {}           # id(ring) → {consumer lane: count}
        self.frees: dict = {}          # id(ring) → {consumer lane: [times]}
        self.flows: list = []          # (cat, (rank, tid, ts), (rank, tid, ts), name)
        self.counters: list = []       # (rank, name, ts, value)
        self.generated_files: dict = {}   # filename → FunctionCode (op → source line)

    # ------------------------------------------------------------------ scheduler hooks
    def submitted(self, run, task) -> None:
        rank = run.rank
        t = self.host_clock.get(rank, 0.0) + self.cost.host_submit_ns
        self.host_clock[rank] = t
        deps = [o.id for o in run.live.values() if o.dependents and o.dependents[-1] is task]
        self.tasks[(rank, task.id)] = _TaskTimes(submit=t, deps=deps)
        self.names[(rank, task.id)] = task.code.name
        self.host_ops.append((rank, f"submit {task.code.name} #{task.id}", t - self.cost.host_submit_ns,
                              self.cost.host_submit_ns, {"task": task.id}))

    def _times(self, run, task) -> _TaskTimes:
        key = (run.rank, task.id)
        times = self.tasks.get(key)
        if times is None:                       # a block of an Spmd launch, or a Group member: its parent's times
            parent = self.tasks.get((run.rank, task.parent.id)) if task.parent is not None else None
            times = self.tasks[key] = _TaskTimes(submit=parent.submit if parent else 0.0,
                                                 deps=list(parent.deps) if parent else [])
            self.names[key] = task.code.name
        return times

    def _ready_at(self, run, times: _TaskTimes) -> float:
        ready = times.submit + self.cost.task_launch_ns
        for d in times.deps:
            end = self.tasks[(run.rank, d)].end
            if end is not None:
                ready = max(ready, end)
        return ready

    def lane_started(self, run, ctx, task, code) -> None:
        """A kernel lane begins on ctx.core (Group and Spmd wrappers have no core time of their own)."""
        times = self._times(run, task)
        if times.start is None:
            start = self._ready_at(run, times)
            for core in task.cores:
                start = max(start, self.core_free.get((run.rank, core.name), 0.0))
            times.start = start
        core = ctx.core
        if code.func.func_type.name in ("Group", "Spmd") or core is None:
            self.lanes[id(ctx)] = _Lane(task, None, code.name, times.start, times.start)
            return
        start = max(times.start, self.core_free.get((run.rank, core.name), 0.0))
        lane = _Lane(task, core, code.name, start, start)
        self.lanes[id(ctx)] = lane
        times.lanes.append(lane)

    def task_finished(self, run, task) -> None:
        times = self._times(run, task)
        end = max([times.start or 0.0] + [lane.clock for lane in times.lanes])
        times.end = end
        for core in task.cores:
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

    def dependency_graph(self) -> dict:
        """The task graph of the run (deps.json): each task with its kernel, times and predecessors."""
        tasks = [{"rank": r, "task": t, "kernel": self.names.get((r, t)), "start_ns": times.start,
                  "end_ns": times.end, "depends_on": times.deps}
                 for (r, t), times in sorted(self.tasks.items())]
        edges = [{"rank": r, "from": d, "to": t} for (r, t), times in sorted(self.tasks.items()) for d in times.deps]
        return {"tasks": tasks, "edges": edges}

    def total_ns(self) -> float:
        ends = [t.end for t in self.tasks.values() if t.end is not None]
        return max(ends, default=0.0)


def wants_timeline(config) -> bool:
    """A run records a timeline when its config (or PYPTO_CHIP_SWIMLANE=1) asks for a swimlane or a task graph."""
    from pypto.env import swimlane_forced
    return bool(getattr(config, "enable_chip_swimlane", 0) or getattr(config, "enable_dep_gen", False)
                or swimlane_forced())


def write_outputs(recorder: TimelineRecorder, compiled, config) -> dict:
    """Write dfx_outputs/swimlane.json (and deps.json with enable_dep_gen) under the program's build
    directory (one made for it when it has none; later runs overwrite the files); the paths by kind."""
    import json

    from pypto.env import swimlane_forced
    from pypto.runtime.config import new_build_dir
    base = getattr(compiled, "output_dir", None) or getattr(compiled, "_timeline_dir", None)
    if base is None:                             # one directory per compiled program: the last run's files
        base = compiled._timeline_dir = new_build_dir(getattr(compiled.lowered, "name", None) or "program")
    out = base / "dfx_outputs"
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    if getattr(config, "enable_chip_swimlane", 0) or swimlane_forced():
        paths["swimlane"] = out / "swimlane.json"
        paths["swimlane"].write_text(json.dumps(recorder.chrome_trace()))
    if getattr(config, "enable_dep_gen", False):
        paths["deps"] = out / "deps.json"
        paths["deps"].write_text(json.dumps(recorder.dependency_graph(), indent=1))
    return paths


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
