"""The World of a distributed run: N ranks and their symmetric communication windows.

Each rank is a whole device with its own Machine and task Run; the one scheduler loop
(pypto.runtime.sim.launch.run_ranks) steps the agents of all ranks, so a `pld.system.wait`
on rank 0 yields until a `notify` from rank 1 lands. Window buffers are symmetric: one zeroed byte
buffer per rank, same size; a DistributedTensor argument is a numpy view into the calling
rank's buffer, and a remote op finds the peer's copy at the same byte offset (bounds-checked).
A window of a comm domain over a subset of the world numbers its members 0..k-1 (`members`):
pld.rank / pld.nranks of its context and every peer index are domain ranks.

    world = World(4)
    buf = world.alloc_window(64 * 4)                   # 64 FP32 per rank
    view = buf.view(1, (64,), np.float32)              # rank 1's copy
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pypto.errors import SimulationError


@dataclass(eq=False)
class WindowBuffer:
    """One symmetric communication window: `nbytes` zero-initialised bytes on every rank."""
    name: str
    nbytes: int
    bufs: list = field(default_factory=list)
    members: Optional[list] = None            # the comm domain's world ranks, in domain-rank order (None: all)

    def domain_ranks(self) -> list:
        return list(range(len(self.bufs))) if self.members is None else self.members

    def view(self, rank: int, shape: tuple, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count * dtype.itemsize > self.nbytes:
            raise SimulationError(f"pld.window: a {tuple(shape)} {dtype} view needs {count * dtype.itemsize} bytes "
                                  f"but window buffer '{self.name}' has {self.nbytes}",
                                  hint="allocate the window buffer at least as large as its views")
        return self.bufs[rank][:count * dtype.itemsize].view(dtype).reshape(shape)


class World:
    """`pool` (bytes -> [buffers]) lends window memory from earlier calls of the same program: a reused
    buffer is zeroed with one memset instead of fresh pages the first touch of every call faults in."""

    def __init__(self, nranks: int, pool: Optional[dict] = None):
        if nranks < 1:
            raise SimulationError(f"a world needs at least one rank, got {nranks}")
        self.nranks = nranks
        self.windows: list = []
        self.pool = pool

    def _zeroed(self, nbytes: int) -> np.ndarray:
        spare = self.pool.get(nbytes) if self.pool is not None else None
        if spare:
            buf = spare.pop()
            buf.fill(0)
            return buf
        return np.zeros(nbytes, dtype=np.uint8)

    def alloc_window(self, nbytes: int, name: str = "") -> WindowBuffer:
        w = WindowBuffer(name or f"window{len(self.windows)}", int(nbytes),
                         [self._zeroed(int(nbytes)) for _ in range(self.nranks)])
        self.windows.append(w)
        return w

    def release(self) -> None:
        """Hand the window memory back to the pool (the windows stay readable until it is lent again)."""
        if self.pool is not None:
            for w in self.windows:
                self.pool.setdefault(w.nbytes, []).extend(w.bufs)

    def locate(self, arr: np.ndarray, what: str):
        """(window, world rank, byte offset) of a DistributedTensor value; an error when it is no window memory."""
        if not isinstance(arr, np.ndarray):
            raise SimulationError(f"{what}: operand is not a window-bound tensor")
        addr = arr.__array_interface__["data"][0]
        for w in self.windows:
            for r, buf in enumerate(w.bufs):
                base = buf.__array_interface__["data"][0]
                if base <= addr < base + max(w.nbytes, 1):
                    return w, r, addr - base
        raise SimulationError(f"{what}: the tensor is not inside any communication window",
                              hint="pass a pld.window(...) view bound on the host, not an ordinary tensor")

    def peer_view(self, arr: np.ndarray, peer, what: str) -> np.ndarray:
        """The peer's copy of `arr` (same bytes of the same symmetric window); `peer` is a domain rank."""
        w, _me, off = self.locate(arr, what)
        peer = int(peer)
        members = w.domain_ranks()
        if not 0 <= peer < len(members):
            where = f"the world of {self.nranks} ranks" if w.members is None else \
                f"the comm domain of {len(members)} ranks (world ranks {members}) of window '{w.name}'"
            raise SimulationError(f"{what}: peer rank {peer} is outside {where}",
                                  hint="peers are 0 .. nranks-1 (pld.nranks(ctx)), numbered inside the comm domain")
        last = off + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + arr.itemsize if arr.size else off
        if off < 0 or last > w.nbytes:
            raise SimulationError(f"{what}: bytes [{off}, {last}) fall outside window '{w.name}' ({w.nbytes} bytes)")
        return np.ndarray(arr.shape, arr.dtype, buffer=w.bufs[members[peer]], offset=off, strides=arr.strides)

    def rank_of(self, arr: np.ndarray, what: str) -> int:
        """The caller's rank inside the comm domain of the window `arr` lies in."""
        w, rank, _off = self.locate(arr, what)
        members = w.domain_ranks()
        if rank not in members:
            raise SimulationError(f"{what}: world rank {rank} is not a member of the comm domain {members} of "
                                  f"window '{w.name}'")
        return members.index(rank)

    def domain_size(self, arr: np.ndarray, what: str) -> int:
        return len(self.locate(arr, what)[0].domain_ranks())
