"""The reference's import path for the distributed program types (implemented in pypto.runtime.distributed).

    from pypto.ir.distributed_compiled_program import DistributedConfig
"""

from pypto.runtime.distributed import DistributedCompiledProgram, DistributedConfig

__all__ = ["DistributedConfig", "DistributedCompiledProgram"]
