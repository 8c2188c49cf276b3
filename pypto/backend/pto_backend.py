"""`pypto.backend.pto_backend`: the reference's PTO backend module, for the names user code catches.

    from pypto.backend.pto_backend import PartialCodegenError
    try:
        ir.compile(Prog, platform="a2a3")
    except PartialCodegenError as e:
        print(e, sorted(e.files))          # what was written before a kernel's .pto failed

On a device platform a build whose kernel has no `.pto` is no build, so the compile raises this
error (the simulator platforms still run such kernels; report/codegen.txt says which and why).
"""

from __future__ import annotations

from typing import Optional

from pypto.errors import PyptoError


class PartialCodegenError(PyptoError, RuntimeError):
    """Code generation failed after some output files were written; `files` maps them to their text."""

    def __init__(self, message: str, span=None, *, hint: str = "", files: Optional[dict] = None):
        super().__init__(message, span, hint=hint)
        self.files = dict(files or {})
