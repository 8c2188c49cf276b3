"""PassContext: the configuration every pass call runs under (instruments, verification, platform).

Contexts nest; the innermost one is `PassContext.current()`, and outside any `with` block a
default context (verification level from the environment, platform from `pypto.backend`, else a2a3)
applies:

    with PassContext([TimingInstrument()], verification_level=VerificationLevel.ROUNDTRIP):
        program = passes.convert_to_ssa()(program)

`verify_level_from_env` interprets `PYPTO_VERIFY_LEVEL` (read, like every PYPTO_* variable, by pypto.env).
The round-trip check needs the DSL parser, which sits in a sibling layer: whoever opens the
context hands it in (`PassContext(parse=pl.parse)`; the compile driver and the test suite do),
and nested contexts inherit it.
"""

from __future__ import annotations

import enum
import threading
from typing import Callable, Optional, Sequence

from pypto.env import VERIFY_LEVEL_ENV, verify_level_name
from pypto.errors import ValueCheckError
from pypto.ir.platform import Platform, get_platform


class VerificationLevel(enum.Enum):
    NONE = 0        # no automatic checks
    BASIC = 1       # required properties before, produced properties after every pass
    ROUNDTRIP = 2   # BASIC, plus print → parse → structural_equal after every pass


def verify_level_from_env() -> VerificationLevel:
    """`PYPTO_VERIFY_LEVEL` = none / basic / roundtrip (case-insensitive); BASIC when unset."""
    raw = verify_level_name()
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
                 platform: Optional[str] = None, *, parse: Optional[Callable[[str], object]] = None):
        self.instruments = tuple(instruments)
        self._verification_level = verification_level
        self._platform = platform
        self._parse = parse
        if platform is not None:
            get_platform(platform)  # reject unknown names where the context is built
        self._implied: dict = {}  # verification level → the instruments it implies (instruments.instrument_hooks)
        self._pipeline_hooks = None  # while a pipeline runs in this context: its instrument hooks (passes.base)

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

    def parser(self) -> Optional[Callable[[str], object]]:
        """The DSL parser handed to this context or, failing that, to the nearest enclosing one (to it or to
        one of its instruments: the reference's fixtures hand `make_roundtrip_instrument()` its parser)."""
        if self._parse is not None:
            return self._parse
        for ctx in reversed(_stack()):
            if ctx._parse is not None:
                return ctx._parse
            for inst in ctx.instruments:
                if callable(getattr(inst, "parse", None)):
                    return inst.parse
        return None

    def derive(self, extra_instruments: Sequence = (), *, keep_instruments: bool = True) -> "PassContext":
        """A context with this one's level, platform and parser, plus `extra_instruments`."""
        base = self.instruments if keep_instruments else ()
        return PassContext((*base, *extra_instruments), verification_level=self._verification_level,
                           platform=self._platform, parse=self.parser())

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
