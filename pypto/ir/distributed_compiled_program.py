"""The reference's import path for the distributed program types (implemented in pypto.runtime.distributed,
a layer above `pypto.ir`: the names resolve on first use).

    from pypto.ir.distributed_compiled_program import DistributedConfig
"""

from pypto.lazy_exports import lazy_exports

__all__ = ["DistributedConfig", "DistributedCompiledProgram"]
__getattr__, __dir__ = lazy_exports(__name__, {name: "pypto.runtime.distributed" for name in __all__})
