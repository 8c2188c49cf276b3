"""Compatibility namespace for the documented import paths (`from pypto.pypto_core import passes`,
`from pypto.pypto_core.ir import MemorySpace`; `passes` resolves its names on first use, pypto.lazy_exports),
and the log-level hooks the reference's test fixtures use."""

from pypto.log_level import clear_thread_log_level as _clear_thread_log_level  # noqa: F401
from pypto.log_level import set_thread_log_level as _set_thread_log_level  # noqa: F401
from pypto.pypto_core import passes  # noqa: F401
