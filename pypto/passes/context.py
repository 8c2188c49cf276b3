"""PassContext: the configuration every pass call runs under (instruments, verification, platform).

Contexts nest; the innermost one is `PassContext.current()`, and outside any `with` block a
default context (verification level from the environment, platform from `pypto.backend`, else a2a3)
applies:

    with PassContext([TimingInstrument()], verification_level=VerificationLevel.ROUNDTRIP):
        program = passes.convert_to_ssa()(program)

The one place the `PYPTO_VERIFY_LEVEL` environment variable is read is `verify_level_from_env`.
"""

from __future__ import annotations

import enum
import os
import threading
from typing import Optional, Sequence

from pypto.errors import ValueCheckError
from pypto.ir.platform import Platform, get_platform

VERIFY_LEVEL_ENV = "PYPTO_VERIFY_LEVEL"


class VerificationLevel(enum.Enum):
    NONE = 0        # no automatic checks
    BASIC = 1       # required properties before, produced properties after every pass
    ROUNDTRIP = 2   # BASIC, plus print → parse → structural_equal after every pass


def verify_level_from_env() -> VerificationLevel:
    """`PYPTO_VERIFY_LEVEL` = none / basic / roundtrip (case-insensitive); BASIC when unset."""
    raw = os.environ.get(VERIFY_LEVEL_ENV, "").strip()
    if not raw:
        return VerificationLevel.BASIC
    try:
        return VerificationLevel[raw.upper()]
    except KeyError:
        raise ValueCheckError(f"{VERIFY_LEVEL_ENV}={raw!r} is not a verification level",
                              hint="use none, basic or roundtrip") from None


_LOCAL = threading.local()


def _stack() -> list:
    st = getattr(_LOCAL, "stack", None)
    if st is None:
        st = _LOCAL.stack = []
    return st


class PassContext:
    """Instruments and options for the passes run inside it (a nestable context manager)."""

    def __init__(self, instruments: Sequence = (), verification_level: Optional[VerificationLevel] = None,
                 platform: Optional[str] = None):
        self.instruments = tuple(instruments)
        self._verification_level = verification_level
        self._platform = platform
        if platform is not None:
            get_platform(platform)  # reject unknown names where the context is built
        self._implied: dict = {}  # verification level → the instruments it implies (kept: they hold state)

    @property
    def verification_level(self) -> VerificationLevel:
        if self._verification_level is None:
            return verify_level_from_env()
        return self._verification_level

    def get_verification_level(self) -> VerificationLevel:
        return self.verification_level

    @property
    def platform(self) -> str:
        """The context's platform; without one, the backend chosen with pypto.backend, else a2a3."""
        if self._platform is not None:
            return self._platform
        from pypto.backend import configured_platform
        return configured_platform() or "a2a3"

    def get_platform(self) -> Platform:
        return get_platform(self.platform)

    def effective_instruments(self) -> tuple:
        """The user's instruments plus those the verification level implies (unless given already)."""
        from pypto.passes.instruments import RoundtripInstrument, VerificationInstrument, VerificationMode
        level = self.verification_level
        cached = self._implied.get(level)
        if cached is not None:
            return cached
        out = list(self.instruments)
        if level is not VerificationLevel.NONE and not any(isinstance(i, VerificationInstrument) for i in out):
            out.append(VerificationInstrument(VerificationMode.BEFORE_AND_AFTER))
        if level is VerificationLevel.ROUNDTRIP and not any(isinstance(i, RoundtripInstrument) for i in out):
            out.append(RoundtripInstrument())
        self._implied[level] = tuple(out)
        return self._implied[level]

    @staticmethod
    def current() -> "PassContext":
        st = _stack()
        return st[-1] if st else _DEFAULT

    def __enter__(self) -> "PassContext":
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        st = _stack()
        if st and st[-1] is self:
            st.pop()
        elif self in st:
            st.remove(self)


_DEFAULT = PassContext()


def current_platform() -> Platform:
    return PassContext.current().get_platform()
