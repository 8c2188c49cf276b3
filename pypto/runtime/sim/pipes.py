"""Cross-core pipe rings: the state tpush / tpop / tfree operate on.

A ring lives on a cluster (`ctx.cluster.state`), is created by the pipe's initialization and
persists across tasks on that cluster, as on the chip. It has `slot_num` slots of `slot_size`
bytes. `push` blocks while the slot it would fill has not been freed; `pop` blocks until the
lane's next slot is ready; only `free` releases a slot, and with two consumer lanes (split
modes) a slot is released when both lanes freed it — so a missing tfree deadlocks, visibly.

    ring = get_ring(ctx, ("c2v", 0), slot_num=2, slot_size=16384, consumers=2)
    blk = ring.push(tile.view())            # None, or a Block to yield
    got = ring.pop(lane)                    # the slot's bytes (uint8), or a Block
    ring.free(lane)
"""

from __future__ import annotations

from typing import Optional, Union

import numpy as np

from pypto.errors import SimulationError
from pypto.runtime.sim.blocking import Block


class Ring:
    def __init__(self, name: str, slot_num: int, slot_size: int, consumers: int = 1):
        if slot_num < 1 or slot_size < 1:
            raise SimulationError(f"pipe {name}: slot_num and slot_size must be positive ({slot_num}, {slot_size})")
        self.name = name
        self.slot_num = slot_num
        self.slot_size = slot_size
        self.consumers = consumers
        self.slots = np.full((slot_num, slot_size), 0xFF, dtype=np.uint8)
        self.nbytes = [0] * slot_num
        self.ready = [False] * slot_num        # pushed and not yet released
        self.freed = [0] * slot_num            # lanes that freed the slot since it was pushed
        self.tail = 0                          # next slot the producer fills
        self.heads = [0] * consumers           # next slot each consumer lane pops
        self.popped = [None] * consumers       # slot each lane holds (popped, not freed)

    def occupancy(self) -> str:
        return f"pipe {self.name}: {sum(self.ready)}/{self.slot_num} slots full"

    def push(self, data: np.ndarray) -> Optional[Block]:
        """Copy a tile's bytes into the next slot; a Block while that slot is still in use."""
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        if raw.size > self.slot_size:
            raise SimulationError(f"pipe {self.name}: a {raw.size}-byte tile does not fit a {self.slot_size}-byte slot")
        slot = self.tail
        if self.ready[slot]:
            return Block(lambda: not self.ready[slot], "tpush", self.occupancy() + " (waiting for a tfree)")
        self.slots[slot, :raw.size] = raw
        self.nbytes[slot] = raw.size
        self.ready[slot] = True
        self.freed[slot] = 0
        self.tail = (slot + 1) % self.slot_num
        return None

    def pop(self, lane: int = 0) -> Union[np.ndarray, Block]:
        """The bytes of the lane's next ready slot (the slot stays held until `free`)."""
        if self.popped[lane] is not None:
            raise SimulationError(f"pipe {self.name}: lane {lane} pops again before freeing its previous slot",
                                  hint="call tfree on the popped tile first")
        slot = self.heads[lane]
        if not self.ready[slot]:
            return Block(lambda: self.ready[slot], "tpop", self.occupancy() + " (waiting for a tpush)")
        self.popped[lane] = slot
        self.heads[lane] = (slot + 1) % self.slot_num
        return self.slots[slot, :self.nbytes[slot]]

    def free(self, lane: int = 0) -> None:
        slot = self.popped[lane]
        if slot is None:
            raise SimulationError(f"pipe {self.name}: lane {lane} frees a slot it has not popped")
        self.popped[lane] = None
        self.freed[slot] += 1
        if self.freed[slot] == self.consumers:
            self.ready[slot] = False


def get_ring(ctx, key, slot_num: int, slot_size: int, consumers: int = 1) -> Ring:
    """The ring `key` of the agent's cluster, created on first use with the given geometry."""
    state = ctx.cluster.state
    ring = state.get(("pipe", key))
    if ring is None:
        ring = state[("pipe", key)] = Ring(str(key), slot_num, slot_size, consumers)
    elif (ring.slot_num, ring.slot_size, ring.consumers) != (slot_num, slot_size, consumers):
        raise SimulationError(f"pipe {key} re-initialized with another geometry: "
                              f"{(slot_num, slot_size, consumers)} vs {(ring.slot_num, ring.slot_size, ring.consumers)}")
    return ring
