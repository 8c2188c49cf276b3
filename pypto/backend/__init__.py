"""pypto.backend: the process-wide choice of target hardware (the reference's backend singleton).

    from pypto import backend
    backend.set_backend_type(backend.BackendType.Ascend950)   # passes now target the a5 platform

The choice can be made once per process (setting a different one raises); `reset_for_testing()`
clears it. Passes read it through `PassContext.get_platform()` when their context names no
platform; without a choice they target a2a3 (Ascend910B).
"""

from __future__ import annotations

import enum
from typing import Optional

from pypto.errors import ValueCheckError


class BackendType(enum.Enum):
    Ascend910B = "Ascend910B"   # the a2a3 platform
    Ascend950 = "Ascend950"     # the a5 platform

    @property
    def platform_name(self) -> str:
        return "a2a3" if self is BackendType.Ascend910B else "a5"


_CHOSEN: Optional[BackendType] = None


def set_backend_type(backend_type: BackendType) -> None:
    """Choose the target once; choosing the same one again is harmless, a different one is an error."""
    global _CHOSEN
    if not isinstance(backend_type, BackendType):
        raise ValueCheckError(f"set_backend_type needs a BackendType, got {backend_type!r}")
    if _CHOSEN is not None and _CHOSEN is not backend_type:
        raise ValueCheckError(f"Backend type already set to {_CHOSEN.name}; cannot change it to {backend_type.name}",
                              hint="call backend.reset_for_testing() first (tests only)")
    _CHOSEN = backend_type


def get_backend_type() -> BackendType:
    """The chosen backend, or Ascend910B (a2a3) when none was chosen."""
    return _CHOSEN if _CHOSEN is not None else BackendType.Ascend910B


def is_backend_configured() -> bool:
    return _CHOSEN is not None


def reset_for_testing() -> None:
    """Forget the choice (the unit-test fixtures call this around every test)."""
    global _CHOSEN
    _CHOSEN = None


def configured_platform() -> Optional[str]:
    """The platform name ("a2a3" / "a5") of the chosen backend, or None when none was chosen."""
    return _CHOSEN.platform_name if _CHOSEN is not None else None
