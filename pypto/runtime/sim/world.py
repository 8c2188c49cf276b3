"""A World of N simulated ranks under one cooperative scheduler (the distributed simulator).

Each rank is a whole device: its own Machine (cores, arenas), its own task Run and its own
host agent, which runs the chip orchestrations the host dispatched to that rank, one after
another. All agents of all ranks are stepped by one loop, so a `pld.system.wait` on rank 0
yields until a `notify` from rank 1 lands. Window buffers are symmetric: one zeroed byte
buffer per rank, same size; a DistributedTensor argument is a numpy view into the calling
rank's buffer, and a remote op finds the peer's copy at the same byte offset (bounds-checked).
A window of a comm domain over a subset of the world numbers its members 0..k-1 (`members`):
pld.rank / pld.nranks of its context and every peer index are domain ranks.
Deterministic round-robin by default; `schedule="random"` picks the next runnable agent of
any rank with a seeded RNG. A state where agents remain but none can run is a DeadlockError
listing every blocked agent with its rank, core, op and source line.

    world = World(4)
    buf = world.alloc_window(64 * 4)                   # 64 FP32 per rank
    WorldRun(world, sim, platform).execute({r: [(code, args_r)] for r in range(4)})
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pypto.errors import DeadlockError, SimulationError
from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.contexts import HostContext
from pypto.runtime.sim.machine import Machine
from pypto.runtime.sim.scheduler import Agent, Run


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
    def __init__(self, nranks: int):
        if nranks < 1:
            raise SimulationError(f"a world needs at least one rank, got {nranks}")
        self.nranks = nranks
        self.windows: list = []

    def alloc_window(self, nbytes: int, name: str = "") -> WindowBuffer:
        w = WindowBuffer(name or f"window{len(self.windows)}", int(nbytes),
                         [np.zeros(int(nbytes), dtype=np.uint8) for _ in range(self.nranks)])
        self.windows.append(w)
        return w

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


_MACHINES: dict = {}


def _machine(platform, rank: int) -> Machine:
    m = _MACHINES.get((platform.name, rank))
    if m is None:
        m = _MACHINES[(platform.name, rank)] = Machine(platform)
    return m


class WorldRun:
    """Run every rank's dispatches to completion under one scheduler."""

    def __init__(self, world: World, sim, *, schedule: str = "deterministic", seed: Optional[int] = None,
                 window: int = 64):
        self.world = world
        self.sim = sim
        self.random = random.Random(seed if seed is not None else 0) if schedule == "random" else None
        self.runs = []
        for r in range(world.nranks):
            run = Run(sim, _machine(sim.platform, r), schedule=schedule,
                      seed=None if seed is None else seed * 7919 + r, window=window)
            run.world, run.rank = world, r
            self.runs.append(run)

    def _rank_host(self, run: Run, dispatches: list):
        ctx = HostContext(run)
        results = []
        for code, args in dispatches:
            results.append((yield from code.fn(ctx, *args)))
            if run.live or run.ready:           # a rank finishes one dispatch before the next starts
                yield Block(lambda: not run.live and not run.ready, "end of dispatch",
                            f"tasks of {code.name} still running")
        return results

    def execute(self, dispatches: dict) -> dict:
        """`dispatches`: rank → [(FunctionCode, args)]. Returns rank → [result per dispatch]."""
        results: dict = {}
        order = []                               # (run, agent) in creation order, for round-robin
        for r, run in enumerate(self.runs):
            agent = Agent(f"rank {r} host orchestrator", self._rank_host(run, dispatches.get(r, [])), None, None,
                          None)
            run.host = agent
            run.agents.append(agent)
        while True:
            for run in self.runs:
                run._dispatch()
            candidates = [(run, a) for run in self.runs for a in run.agents if a.block is None or a.block.ready()]
            if not candidates:
                if all(not run.agents and not run.ready and not run.live for run in self.runs):
                    return results
                raise self._deadlock()
            if self.random:
                run, agent = self.random.choice(candidates)
            else:
                run, agent = candidates[0]
                run.agents.remove(agent)
                run.agents.append(agent)
                self.runs.remove(run)             # rotate ranks too, so no rank starves another
                self.runs.append(run)
            try:
                blk = agent.gen.send(None)
            except StopIteration as stop:
                run.agents.remove(agent)
                if agent is run.host:
                    results[run.rank] = stop.value
                else:
                    run._lane_done(agent.task)
                continue
            except BaseException as e:
                err = run.located(e, f"rank {run.rank} {agent.name}" if agent is not run.host else agent.name)
                raise err from None
            agent.block = blk

    def _deadlock(self) -> DeadlockError:
        lines, first = [], None
        for run in sorted(self.runs, key=lambda r: r.rank):
            for a in run.agents:
                blk = a.block
                label = a.name if a is run.host else f"rank {run.rank} {a.name}"
                lines.append(f"  {label}: {blk.describe() if blk else 'not runnable'}")
                if first is None and blk is not None and blk.span is not None:
                    first = blk.span
            if run.ready:
                lines.append(f"  rank {run.rank}: {len(run.ready)} ready task(s) with no free core")
        return DeadlockError("deadlock: no rank can make progress\n" + "\n".join(lines), first,
                             hint="a pld.system.wait waits for a notify that never comes (or a pipe / task that "
                                  "never completes)")
