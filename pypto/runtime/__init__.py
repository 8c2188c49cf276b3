"""pypto.runtime: RunConfig, run(), CompiledProgram, and the simulator platforms.

    from pypto.runtime import RunConfig, run
    compiled = run(Prog, a, b, out, config=RunConfig(platform="a2a3sim"))
"""

from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.config import RunConfig
from pypto.runtime.runner import run

__all__ = ["RunConfig", "run", "CompiledProgram"]
