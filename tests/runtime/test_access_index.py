"""The scheduler's indexed dependency test answers exactly what comparing every live task does."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto.runtime.sim.access_index import AccessIndex, conflict, extent

BASES = [np.zeros((8, 16), np.float32), np.zeros(64, np.int8), np.zeros((4, 4), np.float64)]


class _Task:
    def __init__(self, accesses):
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
def test_index_agrees_with_pairwise_comparison(steps):
    index = AccessIndex()
    index.INDEX_FROM = 2                  # switch to the index early, and back when the rank runs dry
    live: dict = {}
    for tid, (acc, finish) in enumerate(steps):
        expected = [t for t in live.values() if conflict(t.accesses, acc)]
        assert index.dependencies(live, acc) == expected
        index.add(tid, acc)
        live[tid] = _Task(acc)
        for done in list(live)[:finish]:      # finish some of the oldest tasks
            del live[done]
            index.remove(done, len(live))


def test_extent_is_what_numpy_compares():
    a = np.zeros((8, 16), np.float32)
    for x, y in [(a[0], a[1]), (a[:, 0], a[:, 1]), (a[::-1], a[3]), (a[2:2], a[1:4]), (a.T, a[7, 15:])]:
        (lx, hx), (ly, hy) = extent(x), extent(y)
        assert (lx < hy and ly < hx) == np.may_share_memory(x, y)
