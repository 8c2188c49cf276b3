"""`benchmark(compiled, args, rounds=, warmup=)`: time repeated runs of a compiled program, per step.

    from pypto.runtime import benchmark
    stats = benchmark(compiled, [a, b, out], rounds=20, warmup=3)
    stats.device_wall_us_median, stats.host_wall_us_min, len(stats.samples)
    stats.print_mean_tree(spread="both")          # chip.run → bind / device_wall / write_back

A chip program is registered once on a ChipWorker (yours with `worker=`, or one opened for the
run from `config=` or `platform=` / `device_id=`, not both) and dispatched `warmup` untimed then
`rounds` timed times (a distributed program runs its world each round). Each launch records its spans, host wall-clock times of the simulated run:
`chip.run` (the whole call), `bind` (arguments checked and bound), `device_wall` (the scheduler
loop that runs every task: the simulated device's share) and `write_back` (results into the
caller's arrays). The simulator models capacities and ordering, not cycles, so these compare builds
and catch regressions; they are not NPU timings.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Optional, Sequence

from pypto.errors import ValueCheckError

SPANS = ("chip.run", "bind", "device_wall", "write_back")
_PARENT = {"bind": "chip.run", "device_wall": "chip.run", "write_back": "chip.run"}


def _spans_us(marks: dict) -> dict:
    start, bind, run, done = marks["start"], marks["bind"], marks["run"], marks["write_back"]
    return {"chip.run": (done - start) * 1e6, "bind": (bind - start) * 1e6, "device_wall": (run - bind) * 1e6,
            "write_back": (done - run) * 1e6}


@dataclass(frozen=True)
class BenchmarkStats:
    rounds: int
    warmup: int
    invocations: tuple = field(default=())      # per timed launch: {span name: microseconds}

    # ------------------------------------------------------------------ per-round series
    @property
    def host_wall_us(self) -> list:
        return [inv["chip.run"] for inv in self.invocations]

    @property
    def device_wall_us(self) -> list:
        return [inv["device_wall"] for inv in self.invocations]

    samples = device_wall_us

    @property
    def times(self) -> tuple:
        """Seconds per timed round (the whole call)."""
        return tuple(us / 1e6 for us in self.host_wall_us)

    def per_round(self, metric: str = "device") -> list:
        """One figure per round: "device" (device_wall), "host" (chip.run), "bind" or "write_back"."""
        span = {"device": "device_wall", "host": "chip.run", "effective": "device_wall"}.get(metric, metric)
        if span not in SPANS:
            raise ValueCheckError(f"per_round({metric!r}): expected device, host, bind or write_back")
        return [inv[span] for inv in self.invocations]

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
        for prefix, series in (("device_wall_us_", "device_wall"), ("device_us_", "device_wall"),
                               ("host_wall_us_", "chip.run"), ("host_us_", "chip.run")):
            if name.startswith(prefix):
                how = name[len(prefix):]
                fn = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max,
                      "stdev": lambda v: statistics.stdev(v) if len(v) > 1 else 0.0}.get(how)
                if fn is not None:
                    return fn([inv[series] for inv in self.invocations])
        raise AttributeError(f"'BenchmarkStats' object has no attribute {name!r}")

    # ------------------------------------------------------------------ span trees
    def format_tree(self, launch: int = 0) -> str:
        inv = self.invocations[launch]
        lines = [f"launch {launch} of {self.rounds} (warmup {self.warmup} excluded):"]
        lines += [f"{_label(s):26s} {inv[s]:10.1f}us" for s in SPANS]
        return "\n".join(lines)

    def format_mean_tree(self, spread: str = "stdev") -> str:
        if spread not in ("stdev", "minmax", "both", "none"):
            raise ValueCheckError(f"spread={spread!r}: expected stdev, minmax, both or none")
        lines = [f"mean of {self.rounds} launches (warmup {self.warmup} excluded):"]
        for s in SPANS:
            values = [inv[s] for inv in self.invocations]
            text = f"{_label(s):26s} {statistics.fmean(values):10.1f}us"
            if spread in ("stdev", "both"):
                text += f"  ±{statistics.stdev(values) if len(values) > 1 else 0.0:.1f}"
            if spread in ("minmax", "both"):
                text += f"  [{min(values):.1f}..{max(values):.1f}]"
            lines.append(text)
        return "\n".join(lines)

    def print_tree(self, launch: int = 0) -> None:
        print(self.format_tree(launch))

    def print_mean_tree(self, spread: str = "stdev") -> None:
        print(self.format_mean_tree(spread))

    def __str__(self) -> str:
        us = lambda t: f"{t * 1e6:.1f}us"   # noqa: E731
        return (f"BenchmarkStats(rounds={self.rounds}, mean={us(self.mean)}, median={us(self.median)}, "
                f"min={us(self.min)}, max={us(self.max)}, device_wall median="
                f"{statistics.median(self.device_wall_us):.1f}us)")


BenchmarkResult = BenchmarkStats                 # the earlier name


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
    if getattr(compiled, "host_function", None) is not None:     # a distributed program: its own world per run
        from pypto.runtime.sim.launch import launch
        for _ in range(warmup):
            launch(compiled, args, config=config)
        invocations = []
        for _ in range(rounds):
            marks: dict = {}
            launch(compiled, args, config=config, spans=marks)
            invocations.append(_spans_us(marks))
        return BenchmarkStats(rounds, warmup, tuple(invocations))
    own = None
    if worker is None:
        worker = current_worker()
    if worker is None:
        own = worker = ChipWorker(config=config or RunConfig(platform=compiled.platform))
    try:
        handle = worker.register(compiled)
        for _ in range(warmup):
            worker.run(handle, *args)
        invocations = []
        for _ in range(rounds):
            marks: dict = {}
            worker.run(handle, *args, _spans=marks)
            invocations.append(_spans_us(marks))
    finally:
        if own is not None:
            own.close()
    return BenchmarkStats(rounds, warmup, tuple(invocations))
