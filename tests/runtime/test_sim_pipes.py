"""Pipe rings: capacity, blocking push / pop, tfree across two consumer lanes."""

import numpy as np
import pytest

from pypto.errors import SimulationError
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.pipes import Ring


def test_push_blocks_when_full_until_freed():
    ring = Ring("c2v0", slot_num=2, slot_size=64)
    a, b, c = (np.full(4, v, np.float32) for v in (1, 2, 3))
    assert ring.push(a) is None and ring.push(b) is None
    blocked = ring.push(c)
    assert isinstance(blocked, Block) and not blocked.ready() and "2/2 slots full" in blocked.detail
    np.testing.assert_array_equal(ring.pop().view(np.float32), a)
    assert not blocked.ready()                     # popped is not freed
    ring.free()
    assert blocked.ready() and ring.push(c) is None
    np.testing.assert_array_equal(ring.pop().view(np.float32), b)


def test_pop_blocks_when_empty_and_tile_must_fit_the_slot():
    ring = Ring("v2c", slot_num=1, slot_size=16)
    blk = ring.pop()
    assert isinstance(blk, Block) and not blk.ready()
    with pytest.raises(SimulationError, match="does not fit"):
        ring.push(np.zeros(5, np.float32))
    ring.push(np.zeros(4, np.float32))
    assert blk.ready()


def test_split_slot_frees_only_when_both_lanes_freed_it():
    ring = Ring("split", slot_num=1, slot_size=32, consumers=2)
    ring.push(np.arange(8, dtype=np.float32))
    ring.pop(0)
    ring.pop(1)
    ring.free(0)
    assert isinstance(ring.push(np.zeros(8, np.float32)), Block)
    ring.free(1)
    assert ring.push(np.zeros(8, np.float32)) is None


def test_grouped_pops_hold_several_slots_and_free_oldest_first():
    ring = Ring("p", slot_num=2, slot_size=16)
    ring.push(np.full(4, 1, np.float32))
    ring.push(np.full(4, 2, np.float32))
    assert ring.pop()[0:4].view(np.float32)[0] == 1 and ring.pop()[0:4].view(np.float32)[0] == 2
    ring.free()
    assert ring.push(np.full(4, 3, np.float32)) is None       # slot 0 (the oldest) was released
    assert isinstance(ring.push(np.zeros(4, np.float32)), Block)


def test_missing_free_blocks_the_next_pop_of_a_one_slot_ring():
    ring = Ring("p", slot_num=1, slot_size=16)
    ring.push(np.zeros(4, np.float32))
    ring.pop()
    assert isinstance(ring.push(np.zeros(4, np.float32)), Block)
    assert isinstance(ring.pop(), Block)                       # the held slot is not popped twice
    with pytest.raises(SimulationError, match="has not popped"):
        Ring("q", slot_num=1, slot_size=16).free()
