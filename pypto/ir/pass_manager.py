"""Compatibility path `pypto.ir.pass_manager` (the reference's import location).

The pass manager lives in `pypto.passes`; `pypto.ir` must not import upward at import time,
so the names are resolved lazily on first use.
"""


def __getattr__(name):
    if name in ("PassManager", "OptimizationStrategy"):
        import pypto.passes as _passes
        return getattr(_passes, name)
    raise AttributeError(f"module 'pypto.ir.pass_manager' has no attribute {name!r}")
