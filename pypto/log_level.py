"""The diagnostic log level (`pypto.set_log_level(pypto.LogLevel.INFO)`), process-wide with an optional
per-thread override, as the reference exposes it, and the `logging` loggers pypto writes through.

User mistakes stay exceptions and `PyptoWarning`s; the log tells what the compiler and the runtime
did: INFO gives each compile (program, platform, time, build directory), each pass's time and whether
it returned a new program, and each simulated run (entry, platform, ranks, schedule). The default
level is WARN, so nothing is printed unless asked.

    import pypto
    pypto.set_log_level(pypto.LogLevel.INFO)      # records go to stderr, "[pypto INFO] ..."
    log = pypto_logger("passes")                  # logging.getLogger("pypto.passes")

The loggers are ordinary `logging` loggers under "pypto": an application may attach its own
handlers; the stderr handler installed here is the default one and can be removed.
"""

from __future__ import annotations

import enum
import logging
import sys
import threading
import weakref


class LogLevel(enum.IntEnum):
    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


EVENT_LEVEL = 15                              # between DEBUG and INFO, as the reference orders EVENT
logging.addLevelName(EVENT_LEVEL, "EVENT")
TO_LOGGING = {LogLevel.DEBUG: logging.DEBUG, LogLevel.EVENT: EVENT_LEVEL, LogLevel.INFO: logging.INFO,
              LogLevel.WARN: logging.WARNING, LogLevel.ERROR: logging.ERROR, LogLevel.FATAL: logging.CRITICAL,
              LogLevel.NONE: logging.CRITICAL + 10}

_GLOBAL = [LogLevel.WARN]
_THREAD = threading.local()
_OVERRIDES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # thread → its override (a thread
                                                                        # that ends drops out)
ROOT = logging.getLogger("pypto")


class _ThreadLevelFilter(logging.Filter):
    """A record passes when it reaches the level in force on the thread that logs it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= TO_LOGGING[get_log_level()]


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time of the record (tests and the CLI redirect it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


def _install_default_handler() -> None:
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("[pypto %(levelname)s] %(message)s"))
    handler.addFilter(_ThreadLevelFilter())
    handler.set_name("pypto-default")
    ROOT.addHandler(handler)
    ROOT.propagate = False


def _sync_logger() -> None:
    levels = [TO_LOGGING[_GLOBAL[0]]] + [TO_LOGGING[lv] for lv in list(_OVERRIDES.values())]
    ROOT.setLevel(min(levels))


def pypto_logger(name: str) -> logging.Logger:
    """The logger of one part of pypto ("passes", "compile", "runtime", ...)."""
    return ROOT.getChild(name)


def get_log_level() -> LogLevel:
    """The level in force on this thread (its override, else the process-wide one)."""
    level = getattr(_THREAD, "level", None)
    return _GLOBAL[0] if level is None else level


def set_log_level(level: LogLevel) -> None:
    _GLOBAL[0] = LogLevel(level)
    _sync_logger()


def set_thread_log_level(level: LogLevel) -> None:
    _THREAD.level = LogLevel(level)
    _OVERRIDES[threading.current_thread()] = _THREAD.level
    _sync_logger()


def clear_thread_log_level() -> None:
    _THREAD.level = None
    _OVERRIDES.pop(threading.current_thread(), None)
    _sync_logger()


_install_default_handler()
_sync_logger()
