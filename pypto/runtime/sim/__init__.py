"""The `a2a3sim` / `a5sim` platforms: final IR executed on a capacity-faithful CPU machine model.

See ../../docs and /design SIMULATOR.md. Entry: `SimProgram(lowered, platform).run(entry, args)`;
the user-facing path is `CompiledProgram.__call__`.
"""

from pypto.runtime.sim.blocking import Block, may_block
from pypto.runtime.sim.program import SimProgram
from pypto.runtime.sim.values import TileValue

__all__ = ["Block", "may_block", "SimProgram", "TileValue"]
