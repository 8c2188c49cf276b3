"""`from pypto.pypto_core.ir import MemorySpace`: the reference's native-module path for the IR (re-exports pypto.ir)."""

from pypto.ir import *  # noqa: F401,F403
from pypto.ir import MemorySpace, PadValue  # noqa: F401
