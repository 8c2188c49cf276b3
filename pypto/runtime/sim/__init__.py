"""The `a2a3sim` / `a5sim` platforms: final IR executed on a capacity-faithful CPU machine model.

Entry: `launch(compiled, args, config=)` (launch.py), which every call goes through
(`CompiledProgram.__call__`, `ChipWorker.run`, the distributed call, `@pl.jit`). Module map:
launch (binding, the one scheduler loop over N ranks), launch_plan (task templates of an orchestration
that only submits), gc_pause (no automatic collection during the loop), codegen (IR → Python source), host_level
(HOST orchestrators: a generator of dispatches), fastpath (specialized whole-tile ops), machine
(cores, arenas), layout (tile placement), scheduler (one rank's tasks and placement), world (the
ranks' windows), contexts (`_sim_ctx`), host_args (user arrays in / out), poison (the poison
convention), blocking (Block, may_block), returns (call sites), program (SimProgram).
"""

from pypto.runtime.sim.blocking import Block, may_block
from pypto.runtime.sim.program import SimProgram
from pypto.runtime.sim.values import TileValue

__all__ = ["Block", "may_block", "SimProgram", "TileValue"]
