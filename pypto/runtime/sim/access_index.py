"""The GM accesses of a rank's unfinished tasks, indexed so that submitting a task checks it only
against the accesses that can overlap its own (the scheduler's dependency test, in O(overlapping)
instead of O(live tasks x accesses)).

Two accesses conflict when one of them writes and they are the same array or their memory bounds
overlap — exactly `np.may_share_memory`'s default (bounds-only) answer, computed here from each
array's data address, shape and strides once per task. Accesses are grouped by the ndarray that owns
their memory; a group remembers the union of its accesses' bounds, so a new access looks only into
the groups whose union its bounds meet (a view outside its owner's buffer is still found: the union
is of the accesses themselves).
"""

from __future__ import annotations

import numpy as np


def extent(x: np.ndarray) -> tuple:
    """(low, high) byte addresses of x's elements, as numpy's overlap test computes them
    (an empty array spans [data, data))."""
    data = x.__array_interface__["data"][0]
    if x.size == 0:
        return data, data
    low = high = 0
    for dim, stride in zip(x.shape, x.strides):
        reach = stride * (dim - 1)
        if reach > 0:
            high += reach
        else:
            low += reach
    return data + low, data + high + x.itemsize


def conflict(a: list, b: list) -> bool:
    """Whether two [(array, writes)] lists conflict: some pair with a writer shares memory (bounds)."""
    for x, wx in a:
        for y, wy in b:
            if (wx or wy) and (x is y or np.may_share_memory(x, y)):
                return True
    return False


def _owner(x: np.ndarray) -> int:
    while isinstance(x.base, np.ndarray):
        x = x.base
    return id(x)


class _Group:
    """The live accesses of one owner: {(low, high): {task id: task}} for reads and for writes (the
    tasks of a run mostly pass the same arrays, so a few distinct bounds stand for many tasks)."""
    __slots__ = ("low", "high", "reads", "writes")

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high
        self.reads: dict = {}
        self.writes: dict = {}


def _readers_after(readers, last: int, found: dict) -> None:
    """Add the readers (a {task id: task} in submission order) that came after task `last`."""
    if readers:
        for tid in reversed(readers):
            if tid < last:
                break
            if tid != last:
                found[tid] = readers[tid]


class AccessIndex:
    """The accesses of a rank's live tasks. Below INDEX_FROM live tasks a new task is compared with
    each of them (`conflict`); from there on the index answers, until the rank runs dry again."""

    INDEX_FROM = 8

    def __init__(self):
        self.active = False
        self.groups: dict = {}           # owner id → _Group
        self.keys: dict = {}             # task id → [(owner id, table, bounds)] it has entries in
        self._seen: dict = {}            # id(array) → (array, owner id, low, high): a run passes the same arrays again
        self._last = None                # (accesses, entries) of the latest dependencies() query

    def dependencies(self, live: dict, accesses: list) -> list:
        """The tasks of `live` ({id: task with .accesses}) that `accesses` conflict with, each once (in no
        particular order: the caller counts them and appends itself to each one's dependents)."""
        if not self.active:
            if len(live) < self.INDEX_FROM:
                return [t for t in live.values() if conflict(t.accesses, accesses)]
            self.active = True
            for t in live.values():
                self._add(t, self.entries(t.accesses))
        entries = self.entries(accesses)
        self._last = (accesses, entries)                        # add() of the same task reuses them
        for _k, lo, hi, _x, _w in entries:
            if lo >= hi:                                        # an empty array: only identity meets it
                return [t for t in live.values() if conflict(t.accesses, accesses)]
        return list(self._conflicting(entries).values())       # (each dependency once; order is free)

    def add(self, task) -> None:
        """Index `task` (with .id and .accesses) after its dependencies() query."""
        if self.active:
            last, accesses = self._last, task.accesses
            self._add(task, last[1] if last is not None and last[0] is accesses else self.entries(accesses))
            self._last = None

    def remove(self, tid: int, live_left: int) -> None:
        if not self.active:
            return
        if not live_left:                # the rank ran dry: back to plain comparisons
            self.active = False
            self.groups.clear()
            self.keys.clear()
            return
        self._remove(tid)

    def entries(self, accesses: list) -> list:
        """[(owner id, low, high, array, writes)] of a task's [(array, writes)] accesses."""
        out = []
        seen = self._seen
        for x, w in accesses:
            got = seen.get(id(x))
            if got is None or got[0] is not x:
                got = seen[id(x)] = (x, _owner(x), *extent(x))
            out.append((got[1], got[2], got[3], x, w))
        return out

    def _conflicting(self, entries: list) -> dict:
        """{id: task} of the indexed tasks `entries` must wait for (all non-empty: an empty array meets
        others only by identity, which the caller checks the plain way).

        Per distinct bounds B only the latest writer of B is taken, plus — for a writing access — the
        readers of B after it: every earlier task on B is a dependency of that writer (it was live when
        the writer came and they conflict), so it finishes before the writer can start, and waiting for
        it too would change nothing but the number of edges (a chain of tasks writing one tensor would
        otherwise carry window-many edges per task)."""
        found: dict = {}
        groups = self.groups.values()
        for _key, lo, hi, _x, w in entries:
            for g in groups:
                if not (g.low < hi and lo < g.high):
                    continue
                writes, reads = g.writes, g.reads
                for bounds, tids in writes.items():
                    l2, h2 = bounds
                    if l2 < hi and lo < h2:
                        last = next(reversed(tids))
                        found[last] = tids[last]
                        if w:
                            _readers_after(reads.get(bounds), last, found)
                if w:
                    for bounds, tids in reads.items():
                        l2, h2 = bounds
                        if l2 < hi and lo < h2 and bounds not in writes:
                            found.update(tids)
        return found

    def _add(self, task, entries: list) -> None:
        tid = task.id
        mine = []
        for key, lo, hi, _x, w in entries:
            g = self.groups.get(key)
            if g is None:
                g = self.groups[key] = _Group(lo, hi)
            else:
                g.low, g.high = min(g.low, lo), max(g.high, hi)
            table = g.writes if w else g.reads
            table.setdefault((lo, hi), {})[tid] = task
            mine.append((key, table, (lo, hi)))
        if mine:
            self.keys[tid] = mine

    def _remove(self, tid: int) -> None:
        for key, table, bounds in self.keys.pop(tid, ()):
            tids = table.get(bounds)
            if tids is not None:
                tids.pop(tid, None)
                if not tids:
                    del table[bounds]
            g = self.groups.get(key)
            if g is not None and not g.reads and not g.writes:
                del self.groups[key]
