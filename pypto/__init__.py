"""PyPTO in pure Python: a DSL, compiler and capacity-faithful simulator for Ascend NPU kernels.

    import pypto.language as pl
    from pypto import ir
    from pypto.runtime import RunConfig, run
"""

from pypto.errors import (CapacityError, DataRaceError, DeadlockError, InternalError, PyptoError, SimulationError,
                          TypeCheckError, UnsupportedError, ValueCheckError)
from pypto.ir.dtypes import DataType
from pypto.log_level import LogLevel, get_log_level, set_log_level

Error = PyptoError
__version__ = "0.1.0"
