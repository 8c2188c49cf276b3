"""The task race detector: unordered tasks that touch the same bytes of a GM buffer.

An opt-out (`no_dep_args=`, `pl.no_dep`, `manual_dep=True`, `pl.manual_scope`) or a missing
`deps=` is an assertion nobody checks: on the device a wrong one shows up as an occasional wrong
number. The simulator checks it on every run. Kernels report each GM window they load or store
(`note_gm`: the tensor and the window, one record per op, never per element); at the end of a
dispatch `check` sorts the records of each buffer by byte range and looks at the overlapping pairs
from different tasks where one writes. Such a pair is a race unless a happens-before path orders
the two tasks: every task carries the set of tasks that must finish before it (its inferred and
declared edges, transitively, plus what the host waited for), fixed when it is submitted, so the
verdict is the same whatever order the schedule ran the tasks in. The earliest racing pair is
reported as a DataRaceError naming both tasks, kernels and source lines, the buffer and the region.
An atomic-add store commutes with another and is not recorded; the blocks of one spmd launch and
the members of one Group are one task here (their own synchronization is not a task edge).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from pypto.errors import DataRaceError

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:                       # numpy < 2
    byte_bounds = np.byte_bounds


def array_bounds(a: np.ndarray) -> tuple:
    """(id of the buffer `a` views, first byte, end byte): what the scheduler's OverlapMap compares."""
    base = a.base
    root = a if base is None or not isinstance(base, np.ndarray) else base
    ai = a.__array_interface__
    if ai["strides"] is None:                # C-contiguous: the bytes from its start, without byte_bounds' loop
        lo = ai["data"][0]
        return id(root), lo, lo + a.nbytes
    lo, hi = byte_bounds(a)
    return id(root), lo, hi


def note_gm(ctx, tensor, window: tuple, write: bool, detector=None) -> None:
    """A kernel's load (write=False) or store of `tensor[window]` (`window`: a tuple of slices);
    `detector`: the run's RaceDetector when the caller already looked it up."""
    if detector is None:
        detector = getattr(getattr(ctx, "run", None), "race", None)
    task = getattr(ctx, "task", None)
    if detector is None or task is None:
        return
    detector.records.append((task.parent or task, tensor, window, write))


def window_of(offsets, extents) -> tuple:
    return tuple(slice(int(o), int(o) + int(e)) for o, e in zip(offsets, extents))


class _Access:
    __slots__ = ("task", "tensor", "window", "write", "lo", "hi")

    def __init__(self, task, tensor, window, write, lo, hi):
        self.task, self.tensor, self.window, self.write, self.lo, self.hi = task, tensor, window, write, lo, hi

    def view(self) -> np.ndarray:
        return self.tensor[self.window]


def _root(a: np.ndarray):
    return a if a.base is None or not isinstance(a.base, np.ndarray) else a.base


class RaceDetector:
    """The GM records of one rank's current dispatch and the check that turns them into a verdict."""

    def __init__(self):
        self.records: list = []

    def check(self) -> None:
        records, self.records = self.records, []
        first = records[0][0] if records else None
        for r in records:
            if r[0] is not first:
                break
        else:
            return                           # one task's own accesses: a race needs two tasks
        tasks = sorted({id(r[0]): r[0] for r in records}.values(), key=lambda t: t.id)
        if all((b.ancestors >> a.id) & 1 for a, b in zip(tasks, tasks[1:])):
            return                           # a chain: happens-before sets are transitive, so every pair is ordered
        by_root: dict = {}
        seen: set = set()
        layouts: dict = {}
        for task, tensor, window, write in records:
            got = _window_bounds(tensor, window, layouts)
            if got is None:
                continue
            lo, hi = got
            key = (task.id, lo, hi, write, tensor.strides, tuple((w.start, w.stop) for w in window))
            if key in seen:
                continue
            seen.add(key)
            root = _root(tensor)
            by_root.setdefault(id(root), (root, []))[1].append(_Access(task, tensor, window, write, lo, hi))
        worst = None
        for root, accesses in by_root.values():
            found = _first_race(accesses)
            if found is not None and (worst is None or _order(found) < _order(worst)):
                worst = found
        if worst is not None:
            raise _error(*worst)


def _window_bounds(tensor: np.ndarray, window: tuple, layouts: dict) -> Optional[tuple]:
    """byte_bounds(tensor[window]), or None when that view is empty — worked out from the tensor's
    layout (`layouts` caches it per tensor) instead of making the view, for windows of unit-step slices."""
    got = layouts.get(id(tensor))
    if got is None or got[0] is not tensor:
        got = layouts[id(tensor)] = (tensor, tensor.__array_interface__["data"][0], tensor.shape, tensor.strides)
    _t, data, shape, strides = got
    if len(window) > len(shape):
        return _view_bounds(tensor[window])
    lo = hi = data
    for axis, n in enumerate(shape):
        if axis < len(window):
            w = window[axis]
            if w.__class__ is not slice or w.step not in (None, 1):
                return _view_bounds(tensor[window])
            start, stop, _step = w.indices(n)
            n = stop - start
            if n <= 0:
                return None
            lo += start * strides[axis]
            hi += start * strides[axis]
        reach = (n - 1) * strides[axis]
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi + tensor.itemsize


def _view_bounds(view: np.ndarray) -> Optional[tuple]:
    return None if view.size == 0 else byte_bounds(view)


def _ordered(a, b) -> bool:
    """Whether a happens-before path joins the two tasks (in either direction)."""
    return bool((b.ancestors >> a.id) & 1 or (a.ancestors >> b.id) & 1)


def _order(pair) -> tuple:
    a, b = pair
    return (max(a.task.seq, b.task.seq), min(a.task.seq, b.task.seq))


def _first_race(accesses: list) -> Optional[tuple]:
    """The earliest (by task ids) overlapping, unordered pair with a write; a sweep over byte ranges."""
    accesses.sort(key=lambda x: x.lo)
    active: list = []
    best = None
    for acc in accesses:
        active = [x for x in active if x.hi > acc.lo]
        for other in active:
            if other.task is acc.task or not (other.write or acc.write):
                continue
            if best is not None and _order((other, acc)) >= _order(best):
                continue
            if _ordered(other.task, acc.task):
                continue
            if np.shares_memory(other.view(), acc.view()):      # exact (strided windows may interleave)
                best = (other, acc) if other.task.seq < acc.task.seq else (acc, other)
        active.append(acc)
    return best


def _task_text(task) -> str:
    where = getattr(task.site, "span", None)
    line = f", submitted at {where}" if where is not None and where.is_known() else ""
    return f"task {task.seq + 1} of the dispatch (kernel {task.code.name}{line})"


def _buffer_name(task, root) -> str:
    for arg, param in zip(task.args, task.code.func.params):
        if isinstance(arg, np.ndarray) and np.shares_memory(arg, root):
            return f"'{param.name_hint}'"
    return "a GM buffer"


def _region(a: _Access, b: _Access) -> str:
    same_layout = (a.tensor.shape == b.tensor.shape and a.tensor.strides == b.tensor.strides
                   and byte_bounds(a.tensor) == byte_bounds(b.tensor))
    if same_layout:
        dims = []
        for sa, sb in zip(a.window, b.window):
            dims.append(f"{max(sa.start, sb.start)}:{min(sa.stop, sb.stop)}")
        return f"elements [{', '.join(dims)}]"
    base = byte_bounds(_root(a.tensor))[0]
    return f"bytes [{max(a.lo, b.lo) - base}, {min(a.hi, b.hi) - base})"


def _error(first: _Access, second: _Access) -> DataRaceError:
    root = _root(first.tensor)
    what = lambda acc: "writes" if acc.write else "reads"            # noqa: E731
    buffer = _buffer_name(first.task, root)
    shape = "x".join(str(d) for d in first.tensor.shape)
    msg = (f"data race on buffer {buffer} ({first.tensor.dtype}[{shape}]), {_region(first, second)}: "
           f"{_task_text(first.task)} {what(first)} it and {_task_text(second.task)} {what(second)} it, and no "
           f"dependency orders the two tasks")
    span = getattr(second.task.site, "span", None)
    return DataRaceError(msg, span, hint="an opt-out (no_dep_args=, pl.no_dep, manual_dep=True, pl.manual_scope) "
                                         "deleted a real edge, or a deps= is missing: declare the edge with deps=[tid] "
                                         "or make the regions disjoint")
