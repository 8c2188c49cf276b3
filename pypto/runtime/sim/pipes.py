"""Cross-core pipe rings: the state tpush / tpop / tfree operate on.

A ring lives on a cluster (`ctx.cluster.state`), is created by the pipe's initialization and
persists across tasks on that cluster, as on the chip. It has `slot_num` slots of `slot_size`
bytes. `push` blocks while the slot it would fill has not been freed; `pop` blocks until the
lane's next slot is ready; only `free` releases a slot, and with two consumer lanes (split
modes) a slot is released when both lanes freed it — so a missing tfree deadlocks, visibly.
A slot's bytes are the only copy of a pushed tile (a pop reads them back): on a5 they are the
ring's own array (the consumer's SRAM), on a2a3 a region of the kernel's GM pipe buffer.

    ring = get_ring(ctx, ("c2v", 0), slot_num=2, slot_size=16384, consumers=2)
    ring.bind_gm(gm_bytes)                  # a2a3: the slots are bytes of __gm_pipe_buffer
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
    def __init__(self, name: str, slot_num: int, slot_size: int, consumers: int = 1, producers: int = 1):
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
        self.popped = [[] for _ in range(consumers)]   # slots each lane holds (popped, not freed), oldest first
        self.taken = [set() for _ in range(slot_num)]   # per slot: lanes that popped it since its push
        self.producers = producers             # lanes that each push one part of every slot (split V2C)
        self.parts = [dict() for _ in range(slot_num)]   # per slot: producer lane → its pushed array
        self.meta = [None] * slot_num          # per slot: what the (first) producer said about the tile
        self.part_meta = [dict() for _ in range(slot_num)]   # per slot: producer lane → what it said
        self.ptails = [0] * producers          # next slot each producer lane fills

    def bind_gm(self, region: np.ndarray) -> None:
        """a2a3: the ring's slots become `region` (slot_num x slot_size bytes of the kernel's
        `__gm_pipe_buffer`), so a push writes GM and a pop reads GM: anything else that writes
        those bytes in between corrupts the transfer, as on the chip. Called at each task's
        initialize_pipe (each task hands the kernel its own buffer); slots pushed earlier keep
        pointing at the buffer they were written to."""
        self.slots = region.reshape(self.slot_num, self.slot_size)

    def _place(self, slot: int, at: int, data: np.ndarray) -> np.ndarray:
        """Write a tile's bytes into the slot at byte `at`; the slot's view of them, typed as the tile."""
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        self.slots[slot, at:at + raw.size] = raw
        return self.slots[slot, at:at + raw.size].view(data.dtype).reshape(data.shape)

    def set_lanes(self, consumers: int, producers: int) -> None:
        """The AIV side's lane count decides how many consumers free / producers fill a slot."""
        if consumers != self.consumers:
            if any(self.popped):
                raise SimulationError(f"pipe {self.name}: lane count changed while a slot is held")
            self.consumers = consumers
            self.heads = [self.heads[0]] * consumers
            self.popped = [[] for _ in range(consumers)]
        if producers != self.producers:
            self.producers = producers
            self.ptails = [self.tail] * producers

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

    def push_part(self, data: np.ndarray, lane: int, meta=None) -> Optional[Block]:
        """One producer lane's part of the next slot; the slot is ready when every producer pushed."""
        if self.producers == 1:
            blk = self.push(data)
            if blk is None:
                slot = (self.tail - 1) % self.slot_num
                self.meta[slot] = meta
                self.parts[slot] = {0: self.slots[slot, :data.nbytes].view(data.dtype).reshape(data.shape)}
            return blk
        slot = self.ptails[lane]
        if self.ready[slot] or lane in self.parts[slot]:
            return Block(lambda: not self.ready[slot] and lane not in self.parts[slot], "tpush",
                         self.occupancy() + " (waiting for a tfree)")
        size = sum(a.nbytes for a in self.parts[slot].values()) + data.nbytes
        if size > self.slot_size or (lane + 1) * data.nbytes > self.slot_size:
            raise SimulationError(f"pipe {self.name}: {size} bytes pushed into a {self.slot_size}-byte slot")
        self.parts[slot][lane] = self._place(slot, lane * data.nbytes, data)   # lanes' parts are equal-sized
        self.part_meta[slot][lane] = meta
        if self.meta[slot] is None or (meta is not None and lane == 0):
            self.meta[slot] = meta
        self.ptails[lane] = (slot + 1) % self.slot_num
        if len(self.parts[slot]) == self.producers:
            self.nbytes[slot] = size
            self.ready[slot] = True
            self.freed[slot] = 0
            self.tail = (slot + 1) % self.slot_num
        return None

    def held_slot(self, lane: int = 0) -> int:
        """The slot the lane popped last (it may hold several: grouped pops)."""
        return self.popped[lane][-1]

    def pop(self, lane: int = 0) -> Union[np.ndarray, Block]:
        """The bytes of the lane's next ready slot (the slot stays held until `free`).

        A lane may hold several slots; it cannot take a slot twice between two pushes, so a
        consumer that never frees finds its next slot "not ready" and waits, as on the chip."""
        slot = self.heads[lane]
        if not self.ready[slot] or lane in self.taken[slot]:
            return Block(lambda: self.ready[slot] and lane not in self.taken[slot], "tpop",
                         self.occupancy() + " (waiting for a tpush)")
        self.popped[lane].append(slot)
        self.taken[slot].add(lane)
        self.heads[lane] = (slot + 1) % self.slot_num
        return self.slots[slot, :self.nbytes[slot]]

    def free(self, lane: int = 0) -> None:
        """Release the lane's oldest held slot; the slot is empty once every consumer lane freed it."""
        if not self.popped[lane]:
            raise SimulationError(f"pipe {self.name}: lane {lane} frees a slot it has not popped",
                                  hint="every tfree must follow the tpop of the tile it frees")
        slot = self.popped[lane].pop(0)
        self.freed[slot] += 1
        if self.freed[slot] == self.consumers:
            self.ready[slot] = False
            self.taken[slot] = set()
            self.parts[slot] = {}
            self.part_meta[slot] = {}


def get_ring(ctx, key, slot_num: int, slot_size: int, consumers: int = 1) -> Ring:
    """The ring `key` of the agent's cluster, created on first use with the given geometry."""
    state = ctx.cluster.state
    ring = state.get(("pipe", key))
    if ring is None:
        ring = state[("pipe", key)] = Ring(str(key), slot_num, slot_size, consumers)
    elif (ring.slot_num, ring.slot_size) != (slot_num, slot_size):
        raise SimulationError(f"pipe {key} re-initialized with another geometry: "
                              f"{(slot_num, slot_size)} vs {(ring.slot_num, ring.slot_size)}")
    return ring


def find_ring(ctx, key) -> Optional[Ring]:
    """The ring `key` of the agent's cluster if a pipe initialization created it."""
    return ctx.cluster.state.get(("pipe", key)) if ctx.cluster is not None else None
