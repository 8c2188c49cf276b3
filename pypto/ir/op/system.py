"""`pypto.ir.op.system`: builders of system.* op calls (pipe setup, cross-core sync; see pypto.ir.op)."""

from pypto.ir.op._family import OpFamily

_FAMILY = OpFamily("system")


def __getattr__(name):
    return getattr(_FAMILY, name)
