"""The simulated chip: clusters of 1 AIC + 2 AIV cores, each core with byte arenas per memory space.

An arena is a `uint8` numpy buffer at the platform's real capacity for that space. A tile is a
typed view into it at the tile's assigned address, so two tiles a planner put on overlapping
bytes really overwrite each other. Arenas are created the first time a core is used and
refilled with poison (pypto.runtime.sim.poison: 0xFF bytes) at the first use in each run, so nothing leaks between runs and fresh memory is never zero.
The refill covers the bytes tile views were ever handed on that core (the rest still holds its first
fill) and happens when a kernel first binds its tiles in the run (`poison_if_due`).

    machine = Machine(get_platform("a2a3"))
    core = machine.aiv_cores[0]
    view = core.bind(MemorySpace.Vec, addr=0, shape=(64, 64), dtype=np.float32, what="tile x")
"""

from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from pypto.errors import CapacityError, SimulationError
from pypto.ir.enums import MemorySpace
from pypto.ir.platform import Platform

from pypto.runtime.sim.poison import POISON_BYTE, poison_bytes


class Core:
    """One AIC or AIV core: its arenas and the kernel views bound on it."""

    def __init__(self, machine: "Machine", kind: str, index: int, cluster: "Cluster", lane: int = 0):
        self.machine = machine
        self.kind = kind                  # "AIV" | "AIC"
        self.index = index                # index among cores of this kind
        self.cluster = cluster
        self.lane = lane                  # AIV sub-block id within the cluster (0 / 1)
        self.spaces = machine.platform.aiv_spaces if kind == "AIV" else machine.platform.aic_spaces
        self.arenas: dict = {}
        self.bound: dict = {}             # kernel key → tuple of TileValues bound once on this core
        self.handed: dict = {}            # space → [first, end) of the bytes `bind` ever handed out: all a
                                          # kernel can have written (the rest is still poison)
        self.poison_due = False           # a run reserved the core; its arenas are not yet refilled
        self.fresh_fills: dict = {}       # kernel key → the arena views its launches refill (fresh_memory)
        self.epoch = -1
        self.busy = False

    @property
    def name(self) -> str:
        return f"{self.kind} core {self.index}"

    def arena(self, space: MemorySpace) -> np.ndarray:
        buf = self.arenas.get(space)
        if buf is None:
            cap = self.machine.platform.space_capacity(space)
            buf = self.arenas[space] = np.full(cap, POISON_BYTE, dtype=np.uint8)
        return buf

    def begin_run(self, epoch: int) -> None:
        """Poison this core's arenas once per run (lazily: only cores a run touches pay for it, when a
        kernel first binds its tiles on it)."""
        if self.epoch != epoch:
            self.epoch = epoch
            self.machine.touched.add(self.cluster)
            self.poison_due = True

    def poison_if_due(self) -> bool:
        """The run's refill, if still due: every byte a tile view was ever handed becomes poison again, so
        the whole arena is poison afterwards. True when it filled."""
        if not self.poison_due:
            return False
        self.poison_due = False
        for space, (lo, hi) in self.handed.items():
            poison_bytes(self.arenas[space][lo:hi])
        return True

    def bind(self, space: MemorySpace, addr: int, shape: tuple, dtype: np.dtype, what: str,
             span=None) -> np.ndarray:
        """A typed view of `shape` at byte `addr` of this core's `space` arena, checked like hardware."""
        if space not in self.spaces:
            raise SimulationError(f"{self.name} has no {space.name} memory, but {what} lives there",
                                  span, hint=f"{self.kind} cores own {', '.join(s.name for s in sorted(self.spaces, key=lambda s: s.value))}")
        if addr is None or addr < 0:
            raise SimulationError(f"{what} has no assigned address in {space.name} (addr={addr})", span,
                                  hint="the simulator runs final IR: AllocateMemoryAddr must have placed every tile")
        align = self.machine.platform.alignment
        if addr % align:
            raise SimulationError(f"{what} starts at {space.name} address {addr}, not {align}-byte aligned", span)
        np_dtype = np.dtype(dtype)
        count = 1
        for d in shape:
            count *= int(d)
        nbytes = count * np_dtype.itemsize
        cap = self.machine.platform.space_capacity(space)
        if addr + nbytes > cap:
            raise CapacityError(f"{what} occupies {space.name} bytes [{addr}, {addr + nbytes}) but {self.name} has "
                                f"only {cap} bytes of {space.name}", span)
        arena = self.arena(space)
        handed = self.handed.get(space)
        if handed is None or addr < handed[0] or addr + nbytes > handed[1]:
            self.handed[space] = (addr, addr + nbytes) if handed is None else \
                (min(addr, handed[0]), max(addr + nbytes, handed[1]))
        return arena[addr:addr + nbytes].view(np_dtype).reshape(shape)


class Cluster:
    """1 AIC + 2 AIV cores; cross-core pipe rings live here and persist across tasks."""

    def __init__(self, index: int):
        self.index = index
        self.aic: Optional[Core] = None
        self.aiv: list = []
        self.state: dict = {}             # pipe rings and other cluster-wide state, keyed by the ops


class Machine:
    """The cores of one simulated device; created once per platform and reused across runs."""

    def __init__(self, platform: Platform):
        self.platform = platform
        self.clusters = [Cluster(i) for i in range(platform.clusters)]
        self.aic_cores = []
        self.aiv_cores = []
        for cl in self.clusters:
            cl.aic = Core(self, "AIC", cl.index, cl)
            self.aic_cores.append(cl.aic)
            for lane in range(2):
                core = Core(self, "AIV", 2 * cl.index + lane, cl, lane)
                cl.aiv.append(core)
                self.aiv_cores.append(core)
        self.epoch = 0
        self.touched: set = set()        # clusters used since the last new_run

    def new_run(self) -> int:
        """Start a run: forget pipe state and core reservations of the clusters the last run used."""
        self.epoch += 1
        for cl in self.touched:
            cl.state.clear()
            cl.aic.busy = False
            for core in cl.aiv:
                core.busy = False
        self.touched.clear()
        return self.epoch


_LOCAL = threading.local()


def machine_for(platform: Platform, rank: int = 0) -> Machine:
    """Rank `rank`'s machine of a platform for this thread (arenas are big: built once, reused by every run)."""
    machines = getattr(_LOCAL, "machines", None)
    if machines is None:
        machines = _LOCAL.machines = {}
    key = (platform.name, rank)
    m = machines.get(key)
    if m is None:
        m = machines[key] = Machine(platform)
    return m
