"""The `a2a3sim` / `a5sim` platforms: final IR executed on a capacity-faithful CPU machine model.

Entry: `SimProgram(lowered, platform).run(entry, args)`; users reach it through
`CompiledProgram.__call__` (and so `run`, `ir.compile`, `@pl.jit`). Module map: codegen (IR →
Python source), fastpath (specialized whole-tile ops), machine (cores, arenas), layout (tile
placement), scheduler (tasks, agents, deadlock), contexts (`_sim_ctx`), host_args (user arrays
in / out), blocking (Block, may_block), returns (call sites), program (SimProgram).
"""

from pypto.runtime.sim.blocking import Block, may_block
from pypto.runtime.sim.program import SimProgram
from pypto.runtime.sim.values import TileValue

__all__ = ["Block", "may_block", "SimProgram", "TileValue"]
