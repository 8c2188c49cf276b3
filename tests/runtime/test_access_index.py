"""The scheduler's indexed dependency test makes a task wait exactly as comparing every live task does."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.runtime.sim.access_index import AccessIndex, conflict, extent

BASES = [np.zeros((8, 16), np.float32), np.zeros(64, np.int8), np.zeros((4, 4), np.float64)]


class _Task:
    def __init__(self, tid, accesses):
        self.id = tid
        self.accesses = accesses


@st.composite
def views(draw):
    base = BASES[draw(st.integers(0, len(BASES) - 1))]
    flat = base.reshape(-1)
    kind = draw(st.sampled_from(["whole", "slice", "step", "reversed", "empty", "transposed"]))
    if kind == "whole":
        return base
    if kind == "transposed":
        return base.T if base.ndim == 2 else base
    lo = draw(st.integers(0, flat.size - 1))
    hi = draw(st.integers(lo, flat.size))
    if kind == "empty":
        return flat[lo:lo]
    if kind == "step":
        return flat[lo:hi:draw(st.integers(2, 5))]
    if kind == "reversed":
        return flat[lo:hi][::-1]
    return flat[lo:hi]


accesses = st.lists(st.tuples(views(), st.booleans()), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(accesses, st.integers(0, 3)), min_size=1, max_size=30))
def test_index_waits_for_what_pairwise_comparison_does(steps):
    """The index may leave out a conflicting task that one of the returned ones already waits for
    (transitively): the task becomes ready at the same moment."""
    index = AccessIndex()
    index.INDEX_FROM = 2                  # switch to the index early, and back when the rank runs dry
    live: dict = {}
    waits: dict = {}                      # task id → ids of the tasks it was given to wait for
    for tid, (acc, finish) in enumerate(steps):
        full = {t.id for t in live.values() if conflict(t.accesses, acc)}
        got = [t.id for t in index.dependencies(live, acc)]
        assert len(got) == len(set(got)) and set(got) <= full
        reach, todo = set(), list(got)
        while todo:
            x = todo.pop()
            if x not in reach:
                reach.add(x)
                todo += waits.get(x, ())
        assert full <= reach
        waits[tid] = set(got)
        live[tid] = task = _Task(tid, acc)
        index.add(task)
        for done in list(live)[:finish]:      # finish some of the oldest tasks
            del live[done]
            index.remove(done, len(live))


def test_extent_is_what_numpy_compares():
    a = np.zeros((8, 16), np.float32)
    for x, y in [(a[0], a[1]), (a[:, 0], a[:, 1]), (a[::-1], a[3]), (a[2:2], a[1:4]), (a.T, a[7, 15:])]:
        (lx, hx), (ly, hy) = extent(x), extent(y)
        assert (lx < hy and ly < hx) == np.may_share_memory(x, y)
