"""The diagnostic log threshold (`pypto.set_log_level(pypto.LogLevel.ERROR)`), process-wide with an
optional per-thread override, as the reference exposes it.

pypto reports problems as exceptions and `PyptoWarning`s (filtered by Python's `warnings`
machinery), so the level is a setting callers store and read back; no pypto output depends on it.
"""

from __future__ import annotations

import enum
import threading


class LogLevel(enum.IntEnum):
    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


_GLOBAL = [LogLevel.WARN]
_THREAD = threading.local()


def get_log_level() -> LogLevel:
    """The level in force on this thread (its override, else the process-wide one)."""
    level = getattr(_THREAD, "level", None)
    return _GLOBAL[0] if level is None else level


def set_log_level(level: LogLevel) -> None:
    _GLOBAL[0] = LogLevel(level)


def set_thread_log_level(level: LogLevel) -> None:
    _THREAD.level = LogLevel(level)


def clear_thread_log_level() -> None:
    _THREAD.level = None

