"""Compatibility path `pypto.ir.pass_manager` (the reference's import location).

The pass manager lives in `pypto.passes`, a layer above `pypto.ir`: the names resolve on first use.
"""

from pypto.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {"PassManager": "pypto.passes", "OptimizationStrategy": "pypto.passes",
                                             "PassDumpLevel": "pypto.runtime.compile_options"})
