"""`run(program, *tensors, config=)`: compile, then execute when tensors are given.

    compiled = run(Prog, a, b, out, config=RunConfig())     # runs in place, returns the CompiledProgram
    compiled = run(Prog)                                     # compile only
"""

from __future__ import annotations

from typing import Optional

from pypto.runtime.compile import compile_with_config
from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.config import RunConfig, default_config


def run(program, *args, config: Optional[RunConfig] = None) -> CompiledProgram:
    config = config or default_config()
    compiled = compile_with_config(program, config)
    if args and not config.codegen_only:
        compiled(*args, config=config)
    return compiled
