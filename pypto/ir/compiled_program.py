"""Compatibility path `pypto.ir.compiled_program` (the reference's import location of CompiledProgram).

CompiledProgram lives in `pypto.runtime`, two layers above `pypto.ir`: the name resolves on first use.
"""

from pypto.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {"CompiledProgram": "pypto.runtime.compiled_program"})
