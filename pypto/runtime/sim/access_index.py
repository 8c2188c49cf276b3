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
    """The live accesses of one owner: {(low, high): {task id: None}} for reads and for writes (the
    tasks of a run mostly pass the same arrays, so a few distinct bounds stand for many tasks)."""
    __slots__ = ("low", "high", "reads", "writes")

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high
        self.reads: dict = {}
        self.writes: dict = {}

    def empty(self) -> bool:
        return not self.reads and not self.writes


class AccessIndex:
    """The accesses of a rank's live tasks. Below INDEX_FROM live tasks a new task is compared with
    each of them (`conflict`); from there on the index answers, until the rank runs dry again."""

    INDEX_FROM = 8

    def __init__(self):
        self.active = False
        self.groups: dict = {}           # owner id → _Group
        self.keys: dict = {}             # task id → [(owner id, table, bounds)] it has entries in
        self._seen: dict = {}            # id(array) → (array, owner id, low, high): a run passes the same arrays again

    def dependencies(self, live: dict, accesses: list) -> list:
        """The tasks of `live` ({id: task with .accesses}, in submission order) that `accesses` conflict with."""
        if not self.active:
            if len(live) < self.INDEX_FROM:
                return [t for t in live.values() if conflict(t.accesses, accesses)]
            self.active = True
            for tid, t in live.items():
                self._add(tid, self.entries(t.accesses))
        entries = self.entries(accesses)
        if not all(lo < hi for _k, lo, hi, _x, _w in entries):   # an empty array: only identity meets it
            return [t for t in live.values() if conflict(t.accesses, accesses)]
        found = self._conflicting(entries)
        return [t for tid, t in live.items() if tid in found] if found else []

    def add(self, tid: int, accesses: list) -> None:
        if self.active:
            self._add(tid, self.entries(accesses))

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

    def _conflicting(self, entries: list) -> set:
        """Ids of the indexed tasks with an access conflicting with one of `entries` (all non-empty:
        an empty array meets others only by identity, which the caller checks the plain way)."""
        found: set = set()
        groups = self.groups.values()
        for _key, lo, hi, _x, w in entries:
            for g in groups:
                if not (g.low < hi and lo < g.high):
                    continue
                for table in ((g.reads, g.writes) if w else (g.writes,)):
                    for (l2, h2), tids in table.items():
                        if l2 < hi and lo < h2:
                            found.update(tids)
        return found

    def _add(self, tid: int, entries: list) -> None:
        mine = []
        for key, lo, hi, _x, w in entries:
            g = self.groups.get(key)
            if g is None:
                g = self.groups[key] = _Group(lo, hi)
            else:
                g.low, g.high = min(g.low, lo), max(g.high, hi)
            table = g.writes if w else g.reads
            table.setdefault((lo, hi), {})[tid] = None
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
            if g is not None and g.empty():
                del self.groups[key]
