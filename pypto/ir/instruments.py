"""Compatibility path `pypto.ir.instruments` (the reference's import location).

The instruments live in `pypto.passes.instruments`, a layer above `pypto.ir`: the names resolve on
first use. `make_roundtrip_instrument()` here keeps the reference's no-argument form: its parser
defaults to `pypto.language.parse`.
"""

from pypto.lazy_exports import lazy_exports, resolve

_NAMES = ("CallbackInstrument", "DumpInstrument", "Instrument", "PassSelection", "RoundtripInstrument",
          "TimingInstrument", "VerificationInstrument", "VerificationMode")
__getattr__, __dir__ = lazy_exports(__name__, {name: "pypto.passes.instruments" for name in _NAMES})


def make_roundtrip_instrument(parse=None):
    """The print → parse → structural-equal instrument (parser: `parse`, else `pypto.language.parse`)."""
    return resolve("pypto.passes.instruments:RoundtripInstrument")(parse or resolve("pypto.language:parse"))
