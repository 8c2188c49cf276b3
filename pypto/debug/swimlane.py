"""Reading and checking swimlane files: the Chrome trace event format Perfetto and chrome://tracing load.

A simulated run writes `dfx_outputs/swimlane.json` when asked (`RunConfig(enable_chip_swimlane=True)`
or `PYPTO_CHIP_SWIMLANE=1`; the recorder is pypto.runtime.sim.timeline). These helpers load such a
file, check it against the trace event format, and sum it up per track:

    trace = load_swimlane(compiled.last_timeline["swimlane"])
    problems = check_chrome_trace(trace)         # [] when the file is well-formed
    busy_us = busy_time(trace)                   # {(pid, track name): microseconds of task slices}
"""

from __future__ import annotations

import json
from numbers import Real
from pathlib import Path

# Per phase: the fields an event of that phase must carry (beyond "ph"), and their kinds.
_NUMBER, _TEXT, _ID = "number", "string", "id"
_REQUIRED = {
    "X": {"name": _TEXT, "ts": _NUMBER, "dur": _NUMBER, "pid": _ID, "tid": _ID},
    "B": {"name": _TEXT, "ts": _NUMBER, "pid": _ID, "tid": _ID},
    "E": {"ts": _NUMBER, "pid": _ID, "tid": _ID},
    "i": {"name": _TEXT, "ts": _NUMBER, "pid": _ID},
    "C": {"name": _TEXT, "ts": _NUMBER, "pid": _ID, "args": "object"},
    "M": {"name": _TEXT, "pid": _ID, "args": "object"},
    "s": {"name": _TEXT, "id": _ID, "ts": _NUMBER, "pid": _ID, "tid": _ID},
    "t": {"name": _TEXT, "id": _ID, "ts": _NUMBER, "pid": _ID, "tid": _ID},
    "f": {"name": _TEXT, "id": _ID, "ts": _NUMBER, "pid": _ID, "tid": _ID},
}
_METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def load_swimlane(path) -> dict:
    return json.loads(Path(path).read_text())


def _kind_ok(value, kind: str) -> bool:
    if kind == _NUMBER:
        return isinstance(value, Real) and not isinstance(value, bool) and value == value
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _ID:
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    return isinstance(value, dict)


def check_chrome_trace(trace) -> list:
    """Every way `trace` breaks the Chrome trace event format (an empty list when it is well-formed).

    Checks the container (an object with a `traceEvents` list, or a bare list), each event's phase
    and required fields with their types, non-negative durations, counter values that are numbers,
    metadata names, and that each flow start `s` has a matching finish `f` (same id and category)
    that does not go back in time.
    """
    problems: list = []
    if isinstance(trace, dict):
        events = trace.get("traceEvents")
        if not isinstance(events, list):
            return ["the trace object has no 'traceEvents' list"]
        unit = trace.get("displayTimeUnit")
        if unit is not None and unit not in ("ms", "ns"):
            problems.append(f"displayTimeUnit must be 'ms' or 'ns', got {unit!r}")
    elif isinstance(trace, list):
        events = trace
    else:
        return [f"a trace is an object or a list, got {type(trace).__name__}"]
    flows: dict = {}
    for i, ev in enumerate(events):
        where = f"event {i}"
        if not isinstance(ev, dict):
            problems.append(f"{where}: not an object")
            continue
        ph = ev.get("ph")
        required = _REQUIRED.get(ph)
        if required is None:
            problems.append(f"{where}: unknown or missing phase {ph!r}")
            continue
        where = f"event {i} ({ph} {ev.get('name', '')!r})"
        for key, kind in required.items():
            if key not in ev:
                problems.append(f"{where}: missing '{key}'")
            elif not _kind_ok(ev[key], kind):
                problems.append(f"{where}: '{key}' must be a {kind}, got {ev[key]!r}")
        if "args" in ev and not isinstance(ev["args"], dict):
            problems.append(f"{where}: 'args' must be an object")
        if ph == "X" and _kind_ok(ev.get("dur"), _NUMBER) and ev["dur"] < 0:
            problems.append(f"{where}: negative duration {ev['dur']}")
        if ph == "C" and isinstance(ev.get("args"), dict):
            bad = [k for k, v in ev["args"].items() if not _kind_ok(v, _NUMBER)]
            if bad:
                problems.append(f"{where}: counter values must be numbers ({', '.join(bad)})")
        if ph == "M" and ev.get("name") not in _METADATA:
            problems.append(f"{where}: unknown metadata event {ev.get('name')!r}")
        if ph == "f" and ev.get("bp") not in (None, "e"):
            problems.append(f"{where}: a flow finish's 'bp' is 'e' or absent, got {ev.get('bp')!r}")
        if ph in ("s", "f") and "id" in ev:
            flows.setdefault((ev.get("cat"), ev["id"]), {})[ph] = ev
    for (cat, fid), ends in flows.items():
        if set(ends) != {"s", "f"}:
            problems.append(f"flow {fid} ({cat}) has {'no finish' if 's' in ends else 'no start'}")
        elif _kind_ok(ends["s"].get("ts"), _NUMBER) and _kind_ok(ends["f"].get("ts"), _NUMBER) and \
                ends["f"]["ts"] < ends["s"]["ts"]:
            problems.append(f"flow {fid} ({cat}) ends before it starts")
    return problems


def track_names(trace: dict) -> dict:
    """{(pid, tid): thread name} from the metadata events."""
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def busy_time(trace: dict, category: str = "task") -> dict:
    """{(pid, track name): microseconds covered by slices of `category`} (tasks by default)."""
    names = track_names(trace)
    out: dict = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == category:
            key = (e["pid"], names.get((e["pid"], e["tid"]), str(e["tid"])))
            out[key] = out.get(key, 0.0) + e["dur"]
    return out
