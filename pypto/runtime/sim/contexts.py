"""The `_sim_ctx` object generated code talks to: one per running agent.

HostContext serves the orchestrator (allocate GM, submit tasks, wait for tasks before the
host touches tensor data). CoreContext serves a kernel running on a core (its bound tile
views, its identity: block / sub-block index, its cluster for pipe state). SIM_OPS functions
receive the same object as `ctx`.
"""

from __future__ import annotations

import numpy as np

from pypto.runtime.sim.blocking import Block
from pypto.runtime.sim.fresh_memory import poison_fresh
from pypto.runtime.sim.poison import poisoned
from pypto.runtime.sim.values import TileValue

MAX_BOUND_KERNELS = 4096


class HostContext:
    __slots__ = ("run", "functions", "platform", "machine")

    def __init__(self, run):
        self.run = run
        self.functions = run.program.functions
        self.platform = run.machine.platform
        self.machine = run.machine

    def create_tensor(self, shape, dtype, manual_dep: bool = False) -> np.ndarray:
        t = poisoned(shape, dtype)
        return self.run.note_manual_dep(t) if manual_dep else t

    def submit(self, site, args):
        return self.run.submit(site, args)

    def window_wait(self):
        return self.run.window_block()

    def gm_wait(self, tensors):
        return self.run.gm_block(tensors)

    # kernels' identity ops may also run on the host (e.g. printed debugging); keep them defined
    block_idx = 0
    block_num = 1
    subblock_idx = 0


class CoreContext:
    __slots__ = ("run", "core", "cluster", "task", "block_idx", "block_num", "subblock_idx", "subblock_num",
                 "functions", "platform", "machine", "agent")

    def __init__(self, run, core, task, block_idx=0, block_num=1, subblock_idx=0, subblock_num=1):
        self.run = run
        self.core = core
        self.cluster = core.cluster if core is not None else None
        self.task = task
        self.block_idx = block_idx
        self.block_num = block_num
        self.subblock_idx = subblock_idx
        self.subblock_num = subblock_num
        self.functions = run.program.functions
        self.platform = run.machine.platform
        self.machine = run.machine
        self.agent = None

    def views(self, code) -> tuple:
        """The kernel's statically placed tiles on this core, bound once per (core, kernel)."""
        bound = self.core.bound
        views = bound.get(code.key)
        if views is None:
            if len(bound) > MAX_BOUND_KERNELS:
                bound.clear()
            views = bound[code.key] = tuple(
                TileValue(self.core.bind(s.space, s.addr, s.shape, s.dtype, f"tile '{s.name}'", s.span), s.valid,
                          s.space)
                for s in code.slots)
        poison_fresh(self.core, code)      # a launch starts from garbage, never from the last task's data
        return views

    def bind_tile(self, slot, byte_offset) -> TileValue:
        """A tile whose byte offset is only known at run time (its kernel has allocations, so its prologue's
        `views` already poisoned them)."""
        data = self.core.bind(slot.space, slot.addr + int(byte_offset), slot.shape, slot.dtype,
                              f"tile '{slot.name}'", slot.span)
        return TileValue(data, slot.valid, slot.space)

    def spawn(self, site, args):
        """A Group member call: start it on this cluster's matching core(s)."""
        return self.run.spawn(self, site, args)

    def block(self, ready, what: str, detail: str = "") -> Block:
        return Block(ready, what, detail)
