"""DistributedWorker: one prepared world that dispatches one or several distributed programs many times.

    with compiled.prepare(callbacks={"inspect": fn}) as rt:      # or DistributedWorker([a, b])
        kv = rt.alloc_tensor((128, 128), torch.float32)          # resident across dispatches
        rt.run(a, x, kv)                                         # several programs: name the one to run
        rt(x, kv)                                                # one program: call it directly

Several compiled programs share the worker (the reference's multi-program serving: a prefill and a
decode program reading one resident KV cache), so they must agree on the platform and the world
(the same device ids). Preparing checks the callbacks up front: every abstract SubWorker (`...`
body) of every program needs one, and a name no program declares is a mistake too. On the
simulator a worker's DeviceTensors are host memory it owns; a run binds them as device memory
(pypto.runtime.sim.launch), so nothing is copied per dispatch.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from pypto.runtime.config import RunConfig
from pypto.runtime.worker import ChipWorker

# the reference's prepare() options that shape a real device's process tree; nothing to do on the simulator
_ACCEPTED_OPTIONS = ("persistent", "reset_persistent_windows", "sub_worker_overrides", "startup_timeout_s")


class DistributedWorker(ChipWorker):
    def __init__(self, compiled, *, extra_compiled=(), config: Optional[RunConfig] = None, callbacks=None,
                 **options):
        from pypto.runtime.distributed import DistributedCompiledProgram
        programs = list(compiled) if isinstance(compiled, (list, tuple)) else [compiled]
        programs += list(extra_compiled)
        if not programs:
            raise ValueError("DistributedWorker needs at least one compiled distributed program")
        for p in programs:
            if not isinstance(p, DistributedCompiledProgram):
                raise TypeError(f"DistributedWorker runs distributed programs (compiled with distributed_config=); "
                                f"got {type(p).__name__}")
        unknown = sorted(set(options) - set(_ACCEPTED_OPTIONS))
        if unknown:
            raise TypeError(f"prepare() got unexpected keyword argument(s) {unknown}")
        first = programs[0]
        for p in programs[1:]:
            if p.platform != first.platform:
                raise ValueError(f"programs on one worker share a platform: {first.platform} and {p.platform}")
            if p.distributed_config.device_ids != first.distributed_config.device_ids:
                raise ValueError(f"programs on one worker share a world: device_ids "
                                 f"{first.distributed_config.device_ids} and {p.distributed_config.device_ids}")
        self.callbacks = dict(callbacks or {})
        _check_callbacks(programs, self.callbacks)
        # `config` only pre-warms a device runtime in the reference; here it picks the simulator options
        base = config if config is not None else RunConfig(platform=first.platform)
        if base.platform != first.platform:
            base = dataclasses.replace(base, platform=first.platform)
        super().__init__(base)
        self.programs = programs
        self.distributed_config = first.distributed_config

    # ------------------------------------------------------------------ memory
    def alloc_tensor(self, shape, dtype, init=None, **kwargs):
        return super().alloc_tensor(shape, _numpy_dtype(dtype), init=init, **kwargs)

    # ------------------------------------------------------------------ running
    def __call__(self, *args, config=None):
        if len(self.programs) > 1:
            raise TypeError(f"this worker holds {len(self.programs)} programs; rt(*args) would be ambiguous: "
                            "dispatch with rt.run(compiled, *args)")
        return self.run(self.programs[0], *args)

    def run(self, compiled, *args, config=None):
        self._check_open()
        if not any(compiled is p for p in self.programs):
            raise ValueError(f"{compiled!r} is not prepared on this worker: pass it to "
                             "prepare(extra_compiled=[...]) or DistributedWorker([...])")
        self.stats.runs += 1
        from pypto.runtime.sim.launch import launch
        return launch(compiled, args, worker=self)

    def register(self, compiled):
        raise TypeError("a DistributedWorker dispatches with rt.run(compiled, *args); register() is ChipWorker's")

    def __repr__(self) -> str:
        names = ", ".join(p.program.name for p in self.programs)
        return f"DistributedWorker([{names}], ranks={self.distributed_config.world_size})"


def _check_callbacks(programs: list, callbacks: dict) -> None:
    declared: dict = {}
    for p in programs:
        for name, f in p.sub_workers.items():
            declared[name] = f
    missing = sorted(n for n, f in declared.items() if f.requires_runtime_binding and n not in callbacks)
    if missing:
        raise ValueError(f"runtime-bound SubWorker callback(s) {missing} have no implementation: pass "
                         f"prepare(callbacks={{{', '.join(repr(m) + ': fn' for m in missing)}}})")
    unknown = sorted(n for n in callbacks if n not in declared)
    if unknown:
        raise ValueError(f"prepare(callbacks=...) names {unknown}, which no prepared program declares as a "
                         f"HOST SubWorker (declared: {sorted(declared) or 'none'})")
    concrete = sorted(n for n in callbacks if not declared[n].requires_runtime_binding)
    if concrete:
        raise ValueError(f"SubWorker(s) {concrete} have a body of their own; only `...` SubWorkers take a callback")
    for n, fn in callbacks.items():
        if not callable(fn):
            raise ValueError(f"callback for '{n}' is not callable: {fn!r}")


def _numpy_dtype(dtype):
    """A torch dtype as the numpy dtype of the same width (other dtypes pass through)."""
    module = type(dtype).__module__
    if module.startswith("torch"):
        import torch
        from pypto.ir.dtypes import DataType
        probe = torch.empty((), dtype=dtype)
        try:
            return DataType.from_numpy(probe.numpy().dtype)
        except TypeError:
            from pypto.interop import torch_as_numpy
            return DataType.from_numpy(torch_as_numpy(probe).dtype)
    return dtype


