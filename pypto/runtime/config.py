"""RunConfig — how to compile and where to run — and the one place runtime env vars are read.

    from pypto.runtime import RunConfig
    cfg = RunConfig()                                   # a2a3sim, deterministic schedule
    cfg = RunConfig(platform="a5sim", sim_schedule="random", sim_seed=7)

Platforms: "a2a3sim" (default) and "a5sim" run on the simulator; "a2a3" / "a5" are accepted
(compiling for them works) but running on them needs the Ascend toolchain and a device,
which this pure-Python build does not have, so a run raises UnsupportedError — unless
PYPTO_SIMULATE=1 is set, which maps "a2a3" / "a5" to "a2a3sim" / "a5sim" wherever a platform is
named (RunConfig, ir.compile), so a device script runs unchanged on a machine without an NPU.
Environment variables are read in one place, pypto.env (PYPTO_PROG_BUILD_DIR, PYPTO_VERIFY_LEVEL,
PYPTO_DUMP_PASSES). `default_config()` is the one RunConfig used wherever a call passes none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pypto.env import (BUILD_DIR_ENV, DUMP_PASSES_ENV, VERIFY_LEVEL_ENV, build_dir_base,  # noqa: F401
                       dump_passes_forced, simulate_devices)
from pypto.errors import UnsupportedError, ValueCheckError

SIM_PLATFORMS = ("a2a3sim", "a5sim")
DEVICE_PLATFORMS = ("a2a3", "a5")
PLATFORMS = SIM_PLATFORMS + DEVICE_PLATFORMS
SCHEDULES = ("deterministic", "random")

def new_build_dir(program_name: str) -> Path:
    stamp = time.strftime("%Y%m%d_%H%M%S") + f"_{time.time_ns() % 1_000_000:06d}"
    return build_dir_base() / f"{program_name or 'program'}_{stamp}"


def backend_type_of(platform: str) -> str:
    return "Ascend950" if platform.startswith("a5") else "Ascend910B"


def check_platform(platform: str) -> str:
    """A known platform name; under PYPTO_SIMULATE=1 a device platform becomes its simulator."""
    if platform not in PLATFORMS:
        raise ValueCheckError(f"unknown platform {platform!r}; expected one of {', '.join(PLATFORMS)}")
    if platform in DEVICE_PLATFORMS and simulate_devices():
        return platform + "sim"
    return platform


def require_simulator(platform: str) -> None:
    """Running needs a *sim platform here: onboard execution needs CANN + an Ascend device."""
    check_platform(platform)
    if platform in DEVICE_PLATFORMS:
        raise UnsupportedError(f"running on platform '{platform}' needs the Ascend toolchain (CANN, ptoas) and a "
                               "device, which are not present in this pure-Python build",
                               hint=f"use platform='{platform}sim', or set PYPTO_SIMULATE=1 to run device "
                                    "platforms on their simulators")


def _check_ring_sizes(config: "RunConfig") -> None:
    """The device runtime's ring sizes: validated as the device would, though the simulator has no rings."""
    rules = {"ring_task_window": (lambda n: n >= 4 and n & (n - 1) == 0, "a power of two >= 4"),
             "ring_heap": (lambda n: n >= 1024 and n & (n - 1) == 0, "a power of two >= 1024"),
             "ring_dep_pool": (lambda n: 4 <= n <= 2**31 - 1, "in [4, 2**31 - 1]")}
    for name, (valid, wanted) in rules.items():
        value = getattr(config, name)
        if value is None:
            continue
        entries = list(value) if isinstance(value, (list, tuple)) else [value]
        if isinstance(value, (list, tuple)) and len(entries) != 4:
            raise ValueCheckError(f"RunConfig.{name} takes a scalar or exactly 4 ints (one per ring), "
                                  f"got {len(entries)}")
        for entry in entries:
            keeps_default = isinstance(value, (list, tuple)) and entry == 0
            if not isinstance(entry, int) or isinstance(entry, bool) or not (keeps_default or valid(entry)):
                raise ValueCheckError(f"RunConfig.{name} entries must be {wanted} (0 in a list keeps "
                                      f"that ring's default), got {entry!r}")


@dataclass
class RunConfig:
    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: Any = None                      # OptimizationStrategy; None → Default
    backend_type: Optional[str] = None        # forced from the platform
    dump_passes: Any = False                  # bool (or a dump level): write passes_dump/
    save_kernels: bool = False                # write the generated artifacts even without dumps
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False                # run(): compile only
    # simulator
    sim_schedule: str = "deterministic"       # or "random"
    sim_seed: Optional[int] = None
    sim_strict: bool = True                   # host arrays must match the dtype exactly (no conversion)
    sim_task_window: int = 64                 # tasks in flight before the host blocks
    sim_strict_memory: bool = False           # report reads of tile bytes no op wrote (slower)
    sim_race_check: bool = True               # DataRaceError for unordered tasks touching the same bytes
    sim_watchdog_seconds: float = 600.0       # a run still going after this long stops (livelock watchdog)
    sim_host_collectives: str = "native"      # host collectives as runtime built-ins, or "recipe": op by op
    # accepted for compatibility with the reference API; no effect on the simulator
    dump_ptoas_passes: bool = False
    compile_profiling: bool = False
    golden_data_dir: Optional[str] = None
    memory_planner: Any = None
    distributed_config: Any = None
    aicpu_thread_num: Optional[int] = None
    enable_chip_swimlane: Any = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    analyze_auto_scopes_for_deps: bool = False
    ring_task_window: Any = None              # device ring sizes (scalar or 4 ints); checked, then unused
    ring_heap: Any = None
    ring_dep_pool: Any = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.platform = check_platform(self.platform)
        from pypto.runtime.compile_options import dump_flag
        self.dump_passes = dump_flag(self.dump_passes)
        if self.sim_schedule not in SCHEDULES:
            raise ValueError(f"sim_schedule must be one of {SCHEDULES}, got {self.sim_schedule!r}")
        if not self.sim_watchdog_seconds > 0:
            raise ValueError(f"sim_watchdog_seconds must be positive, got {self.sim_watchdog_seconds!r}")
        if self.sim_host_collectives not in ("native", "recipe"):
            raise ValueError(f"sim_host_collectives is {self.sim_host_collectives!r}; use 'native' or 'recipe'")
        if self.sim_task_window < 1:
            raise ValueError("sim_task_window must be at least 1")
        _check_ring_sizes(self)
        self.backend_type = backend_type_of(self.platform)
        if not self.dump_passes and dump_passes_forced():
            self.dump_passes = True

    @property
    def is_simulator(self) -> bool:
        return self.platform in SIM_PLATFORMS

    def compile_key(self) -> tuple:
        """The options that change compiled output (part of the @pl.jit cache key)."""
        return (self.platform, str(self.strategy), str(self.memory_planner), bool(self.dump_passes),
                bool(self.save_kernels), self.save_kernels_dir)


_DEFAULT: Optional[RunConfig] = None


def default_config() -> RunConfig:
    """The RunConfig of every call that passes none (built once; treat it as read-only)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = RunConfig()
    return _DEFAULT
