"""Compatibility path `pypto.ir.instruments` (the reference's import location).

`make_roundtrip_instrument()` gives the print → parse → structural-equal instrument; the
instruments live in `pypto.passes.instruments` and are resolved lazily.
"""


def make_roundtrip_instrument():
    from pypto.passes.instruments import RoundtripInstrument
    return RoundtripInstrument()


def __getattr__(name):
    import pypto.passes.instruments as _instruments
    try:
        return getattr(_instruments, name)
    except AttributeError:
        raise AttributeError(f"module 'pypto.ir.instruments' has no attribute {name!r}") from None
