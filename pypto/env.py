"""The one place pypto reads its environment variables (a leaf module: passes and runtime both import it).

    PYPTO_PROG_BUILD_DIR   base of timestamped build directories (default ./build_output)
    PYPTO_VERIFY_LEVEL     none / basic / roundtrip: pass verification (interpreted by pypto.passes.context)
    PYPTO_DUMP_PASSES=1    dump the IR after every pass for every compile, without editing the program
    PYPTO_SIMULATE=1       device platforms a2a3 / a5 run on their simulators a2a3sim / a5sim instead
    PYPTO_CHIP_SWIMLANE=1  every simulated run writes dfx_outputs/swimlane.json (as RunConfig(enable_chip_swimlane=True))
    PTO_BACKTRACE=1        the opt-in excepthook prints the Python traceback of user errors too
    NO_COLOR               (any value) diagnostics are never colored

Each reader looks at the environment when called, so a test or `pypto compile` may set a variable
for one compile.
"""

from __future__ import annotations

import os
from pathlib import Path

BUILD_DIR_ENV = "PYPTO_PROG_BUILD_DIR"
VERIFY_LEVEL_ENV = "PYPTO_VERIFY_LEVEL"
DUMP_PASSES_ENV = "PYPTO_DUMP_PASSES"
SIMULATE_ENV = "PYPTO_SIMULATE"
BACKTRACE_ENV = "PTO_BACKTRACE"
SWIMLANE_ENV = "PYPTO_CHIP_SWIMLANE"
NO_COLOR_ENV = "NO_COLOR"


def build_dir_base() -> Path:
    """Where timestamped build directories go: $PYPTO_PROG_BUILD_DIR, else ./build_output."""
    return Path(os.environ.get(BUILD_DIR_ENV) or "build_output")


def verify_level_name() -> str:
    """The raw PYPTO_VERIFY_LEVEL setting, stripped ("" when unset); the pass context interprets it."""
    return os.environ.get(VERIFY_LEVEL_ENV, "").strip()


def dump_passes_forced() -> bool:
    return os.environ.get(DUMP_PASSES_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def simulate_devices() -> bool:
    """PYPTO_SIMULATE=1: a script written for a device platform runs unchanged on a machine without an NPU."""
    return os.environ.get(SIMULATE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def backtrace_requested() -> bool:
    return os.environ.get(BACKTRACE_ENV, "") == "1"


def color_disabled() -> bool:
    return bool(os.environ.get(NO_COLOR_ENV))


def swimlane_forced() -> bool:
    return os.environ.get(SWIMLANE_ENV, "").strip().lower() in ("1", "true", "yes", "on")
