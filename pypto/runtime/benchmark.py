"""`benchmark(compiled, args, rounds=, warmup=)`: time repeated runs of a compiled program, per step.

    from pypto.runtime import benchmark
    stats = benchmark(compiled, [a, b, out], rounds=20, warmup=3)
    stats.device_wall_us_median, stats.host_wall_us_min, len(stats.samples)
    stats.print_mean_tree(spread="both")          # chip.run → bind / device_wall / write_back
    stats.per_rank("device"), stats.per_dispatch("device"), stats.dispatch_tasks()   # a distributed run

A chip program is registered once on a ChipWorker (yours with `worker=`, or one opened for the
run from `config=` or `platform=` / `device_id=`, not both) and dispatched `warmup` untimed then
`rounds` timed times (a distributed program runs its world each round). Each launch records its
spans, host wall-clock times of the simulated run: `chip.run` (the whole call), `bind` (arguments
checked and bound), `device_wall` (the scheduler loop that runs every task: the simulated device's
share) and `write_back` (results into the caller's arrays).

Each launch also records its dispatches, per rank in submission order (a chip program is one
dispatch on rank 0): a dispatch's *device* time is the time the simulator spent stepping its agents
(its orchestration and its kernels: that card's busy time), its *host* time the window from its
start to its last step (which includes other ranks' work interleaved with it). As in the
reference's L3 statistics, a distributed round's headline device figure is the largest per-rank sum
of dispatch device times (`device_wall_us`), and the cross-rank window is `per_round("union")`.
The simulator models capacities and ordering, not cycles: these compare builds and catch
regressions; they are not NPU timings.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Optional, Sequence

from pypto.errors import ValueCheckError

SPANS = ("chip.run", "bind", "device_wall", "write_back")
_PARENT = {"bind": "chip.run", "device_wall": "chip.run", "write_back": "chip.run"}
_DISPATCH_METRICS = ("device", "host", "effective")


def _spans_us(marks: dict) -> dict:
    start, bind, run, done = marks["start"], marks["bind"], marks["run"], marks["write_back"]
    return {"chip.run": (done - start) * 1e6, "bind": (bind - start) * 1e6, "device_wall": (run - bind) * 1e6,
            "write_back": (done - run) * 1e6}


@dataclass(frozen=True)
class DispatchTiming:
    """One dispatch of one round on one rank: the chip function it ran and its times in microseconds."""
    task: str                     # the dispatched orchestration function
    device_wall_us: float         # time spent running its orchestration and kernels
    host_wall_us: float           # from its start to its last step (other ranks' steps interleave)

    @property
    def effective_us(self) -> float:
        """The reference's orch ∪ sched window; on the simulator the same as the device time."""
        return self.device_wall_us

    def metric(self, name: str) -> float:
        return {"device": self.device_wall_us, "host": self.host_wall_us, "effective": self.effective_us}[name]


def _dispatch_rounds(marks: dict) -> dict:
    """{rank: [DispatchTiming, ...]} of one launch's marks."""
    return {r: [DispatchTiming(name, busy * 1e6, (end - start) * 1e6 if end else 0.0)
                for name, busy, start, end in records]
            for r, records in sorted(marks.get("dispatches", {}).items())}


@dataclass(frozen=True)
class BenchmarkStats:
    rounds: int
    warmup: int
    invocations: tuple = field(default=())      # per timed launch: {span name: microseconds}
    rounds_dispatches: tuple = field(default=())  # per timed launch: {rank: [DispatchTiming, ...]}
    distributed: bool = False

    # ------------------------------------------------------------------ per-round series
    @property
    def host_wall_us(self) -> list:
        return [inv["chip.run"] for inv in self.invocations]

    @property
    def device_wall_us(self) -> list:
        """Per round: a chip program's device_wall span; a distributed round's busiest rank (the sum of its
        dispatches' device times)."""
        if self.distributed:
            return [max((sum(d.device_wall_us for d in ds) for ds in grid.values()), default=0.0)
                    for grid in self.rounds_dispatches]
        return [inv["device_wall"] for inv in self.invocations]

    @property
    def samples(self) -> list:
        return self.device_wall_us

    @property
    def times(self) -> tuple:
        """Seconds per timed round (the whole call)."""
        return tuple(us / 1e6 for us in self.host_wall_us)

    def per_round(self, metric: str = "device") -> list:
        """One figure per round: "device" (device_wall_us), "effective" (the same here), "host" (chip.run),
        "union" (the cross-rank window: the scheduler loop that ran every rank), "bind" or "write_back"."""
        if metric in ("device", "effective"):
            return self.device_wall_us
        span = {"host": "chip.run", "union": "device_wall"}.get(metric, metric)
        if span not in SPANS:
            raise ValueCheckError(f"per_round({metric!r}): expected device, host, effective, union, bind or "
                                  "write_back")
        if metric == "union" and self.fallback_flattened:
            return []
        return [inv[span] for inv in self.invocations]

    # ------------------------------------------------------------------ per rank / per dispatch (L3 views)
    @property
    def fallback_flattened(self) -> bool:
        """The rounds did not all issue the same number of dispatches per rank: no per-rank series lines up."""
        shapes = {tuple((r, len(ds)) for r, ds in grid.items()) for grid in self.rounds_dispatches}
        return len(shapes) > 1

    @property
    def unstable_dispatch_slots(self) -> bool:
        """Some (rank, slot) ran different functions in different rounds, so a slot names no one dispatch."""
        if self.fallback_flattened:
            return True
        return len({tuple((r, tuple(d.task for d in ds)) for r, ds in grid.items())
                    for grid in self.rounds_dispatches}) > 1

    def per_rank(self, metric: str = "device") -> dict:
        """{rank: [one per round]}: the sum of the rank's dispatches in each round (a card runs them one after
        another), for "device", "host" or "effective"."""
        _check_metric("per_rank", metric)
        if self.fallback_flattened:
            return {}
        ranks = self.rounds_dispatches[0].keys() if self.rounds_dispatches else ()
        return {r: [sum(d.metric(metric) for d in grid[r]) for grid in self.rounds_dispatches] for r in ranks}

    def per_dispatch(self, metric: str = "device") -> dict:
        """{(rank, slot): [one per round]}: each dispatch on its own, `slot` its position in the rank's round;
        empty when the slots are unstable across rounds."""
        _check_metric("per_dispatch", metric)
        return {key: [d.metric(metric) for d in series] for key, series in self.dispatch_groups().items()}

    def dispatch_groups(self) -> dict:
        """{(rank, slot): [DispatchTiming per round]} (empty when the slots are unstable)."""
        if self.unstable_dispatch_slots or not self.rounds_dispatches:
            return {}
        first = self.rounds_dispatches[0]
        return {(r, k): [grid[r][k] for grid in self.rounds_dispatches] for r, ds in first.items()
                for k in range(len(ds))}

    def dispatch_tasks(self) -> dict:
        """{(rank, slot): the orchestration function the slot runs}."""
        return {key: series[0].task for key, series in self.dispatch_groups().items()}

    @property
    def all_zero_device(self) -> bool:
        return all(v == 0 for v in self.device_wall_us)

    # ------------------------------------------------------------------ aggregates (seconds, as before)
    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def mean_us(self) -> float:
        return self.mean * 1e6

    def __getattr__(self, name: str):
        """`device_wall_us_median`, `device_us_min`, `host_wall_us_mean`, ...: an aggregate of one series."""
        for prefix, metric in (("device_wall_us_", "device"), ("device_us_", "device"),
                               ("host_wall_us_", "host"), ("host_us_", "host")):
            if name.startswith(prefix):
                how = name[len(prefix):]
                fn = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max,
                      "stdev": lambda v: statistics.stdev(v) if len(v) > 1 else 0.0}.get(how)
                if fn is not None:
                    return fn(self.per_round(metric))
        raise AttributeError(f"'BenchmarkStats' object has no attribute {name!r}")

    # ------------------------------------------------------------------ span trees
    def format_tree(self, launch: int = 0) -> str:
        inv = self.invocations[launch]
        lines = [f"launch {launch} round={launch} of {self.rounds} (warmup {self.warmup} excluded):"]
        lines += [f"{_label(s):26s} {inv[s]:10.1f}us" for s in SPANS]
        if self.distributed and launch < len(self.rounds_dispatches):
            for r, ds in self.rounds_dispatches[launch].items():
                lines += [f"   rank {r} slot={k} {d.task:24s} device {d.device_wall_us:10.1f}us  host "
                          f"{d.host_wall_us:10.1f}us" for k, d in enumerate(ds)]
        return "\n".join(lines)

    def format_mean_tree(self, spread: str = "stdev", *, pid: Optional[int] = None,
                         slot: Optional[int] = None) -> str:
        """The mean span tree; for a distributed run, one line per (rank, slot) below it (`pid=` / `slot=`
        narrow those to one rank or one dispatch)."""
        if spread not in ("stdev", "minmax", "both", "none"):
            raise ValueCheckError(f"spread={spread!r}: expected stdev, minmax, both or none")
        lines = [f"mean of {self.rounds} launches (warmup {self.warmup} excluded):"]
        lines += [f"{_label(s):26s} " + _mean_text([inv[s] for inv in self.invocations], spread) for s in SPANS]
        if self.distributed:
            for (r, k), series in self.dispatch_groups().items():
                if (pid is None or pid == r) and (slot is None or slot == k):
                    lines.append(f"rank {r} slot={k} {series[0].task:18s} device "
                                 + _mean_text([d.device_wall_us for d in series], spread))
        return "\n".join(lines)

    def print_tree(self, launch: int = 0) -> None:
        print(self.format_tree(launch))

    def print_mean_tree(self, spread: str = "stdev", *, pid: Optional[int] = None, slot: Optional[int] = None) -> None:
        print(self.format_mean_tree(spread, pid=pid, slot=slot))

    def __str__(self) -> str:
        us = lambda t: f"{t * 1e6:.1f}us"   # noqa: E731
        return (f"BenchmarkStats(rounds={self.rounds}, mean={us(self.mean)}, median={us(self.median)}, "
                f"min={us(self.min)}, max={us(self.max)}, device_wall median="
                f"{statistics.median(self.device_wall_us):.1f}us)")


BenchmarkResult = BenchmarkStats                 # the earlier name


def _check_metric(view: str, metric: str) -> None:
    if metric not in _DISPATCH_METRICS:
        raise ValueCheckError(f"{view}({metric!r}): expected one of {', '.join(_DISPATCH_METRICS)}")


def _mean_text(values: list, spread: str) -> str:
    text = f"{statistics.fmean(values):10.1f}us"
    if spread in ("stdev", "both"):
        text += f"  ±{statistics.stdev(values) if len(values) > 1 else 0.0:.1f}"
    if spread in ("minmax", "both"):
        text += f"  [{min(values):.1f}..{max(values):.1f}]"
    return text


def _label(span: str) -> str:
    return span if span not in _PARENT else "|- " + span


def benchmark(compiled, args: Sequence = (), *, rounds: int = 10, warmup: int = 1, config=None,
              platform: Optional[str] = None, device_id: Optional[int] = None, worker=None,
              persistent: bool = False, reset_persistent_windows=None) -> BenchmarkStats:
    if rounds < 1:
        raise ValueCheckError(f"benchmark: rounds must be at least 1, got {rounds}")
    if warmup < 0:
        raise ValueCheckError(f"benchmark: warmup must be non-negative, got {warmup}")
    if config is not None and (platform is not None or device_id is not None):
        raise ValueCheckError("benchmark: pass config= or platform= / device_id=, not both")
    if persistent or reset_persistent_windows is not None:
        raise ValueCheckError("benchmark(persistent=...) is for distributed programs on a persistent worker, "
                              "which the single-chip simulator benchmark does not open")
    from pypto.runtime.config import RunConfig
    from pypto.runtime.worker import ChipWorker, current_worker
    if config is None and (platform is not None or device_id is not None):
        config = RunConfig(platform=platform or compiled.platform, device_id=device_id or 0)
    args = list(args)
    marks_per_round: list = []
    if getattr(compiled, "host_function", None) is not None:     # a distributed program: its own world per run
        from pypto.runtime.sim.launch import launch
        for _ in range(warmup):
            launch(compiled, args, config=config)
        for _ in range(rounds):
            marks: dict = {}
            launch(compiled, args, config=config, spans=marks)
            marks_per_round.append(marks)
        return _stats(rounds, warmup, marks_per_round, distributed=True)
    own = None
    if worker is None:
        worker = current_worker()
    if worker is None:
        own = worker = ChipWorker(config=config or RunConfig(platform=compiled.platform))
    try:
        handle = worker.register(compiled)
        for _ in range(warmup):
            worker.run(handle, *args)
        for _ in range(rounds):
            marks = {}
            worker.run(handle, *args, _spans=marks)
            marks_per_round.append(marks)
    finally:
        if own is not None:
            own.close()
    return _stats(rounds, warmup, marks_per_round, distributed=False)


def _stats(rounds: int, warmup: int, marks_per_round: list, *, distributed: bool) -> BenchmarkStats:
    return BenchmarkStats(rounds, warmup, tuple(_spans_us(m) for m in marks_per_round),
                          tuple(_dispatch_rounds(m) for m in marks_per_round), distributed)
