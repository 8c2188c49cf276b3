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
(pypto.runtime.sim.launch), so nothing is copied per dispatch. `alloc_stacked_tensor(host)` keeps
shard i for rank i (the host orchestrator indexes it `w[r]`); `submit` runs at once and returns a
completed handle whose `result()` raises the dispatch's error, if any. `register(compiled)` gives a
handle of a prepared program (`handle(*args)` dispatches it), and the raw memory calls
(`malloc` / `free` / `copy_to` / `copy_from`) take `worker_id=r`, the rank whose memory they address.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from pypto.call_site import user_call_span
from pypto.errors import ValueCheckError
from pypto.runtime.config import RunConfig
from pypto.runtime.worker import ChipWorker, DeviceTensor

# the reference's prepare() options that shape a real device's process tree; nothing to do on the simulator
_ACCEPTED_OPTIONS = ("persistent", "reset_persistent_windows", "startup_timeout_s", "inherited_host_tensors")


class DistributedWorker(ChipWorker):
    def __init__(self, compiled, *, extra_compiled=(), config: Optional[RunConfig] = None, callbacks=None,
                 sub_worker_overrides=None, **options):
        from pypto.runtime.distributed import DistributedCompiledProgram
        programs = list(compiled) if isinstance(compiled, (list, tuple)) else [compiled]
        programs += list(extra_compiled)
        if not programs:
            raise ValueCheckError("DistributedWorker needs at least one compiled distributed program")
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
                raise ValueCheckError(f"programs on one worker share a platform: {first.platform} and {p.platform}")
            if p.distributed_config.device_ids != first.distributed_config.device_ids:
                raise ValueCheckError(f"programs on one worker share a world: device_ids "
                                 f"{first.distributed_config.device_ids} and {p.distributed_config.device_ids}")
        self.callbacks = dict(callbacks or {})
        overrides = dict(sub_worker_overrides or {})
        try:
            _check_callbacks(programs, self.callbacks, overrides)
        except ValueCheckError as e:               # a mistake in the user's prepare(...) call: point at it
            raise e.with_span(user_call_span())
        # an override replaces any SubWorker (its body or its binding); it is called like a callback
        self.callbacks.update(overrides)
        # `config` only pre-warms a device runtime in the reference; here it picks the simulator options
        base = config if config is not None else RunConfig(platform=first.platform)
        if base.platform != first.platform:
            base = dataclasses.replace(base, platform=first.platform)
        super().__init__(base)
        self.programs = programs
        self.distributed_config = first.distributed_config

    # ------------------------------------------------------------------ running
    def __call__(self, *args, config=None):
        if len(self.programs) > 1:
            raise TypeError(f"this worker holds {len(self.programs)} programs; rt(*args) would be ambiguous: "
                            "dispatch with rt.run(compiled, *args)")
        return self.run(self.programs[0], *args)

    @property
    def worker_ids(self) -> range:
        """One chip per rank: `worker_id=r` of malloc / copy_to / copy_from / alloc_tensor is rank r's memory."""
        return range(self.distributed_config.world_size)

    def run(self, compiled, *args, config=None):
        from pypto.runtime.worker import RegistrationHandle
        self._check_open("run")
        if isinstance(compiled, RegistrationHandle):
            compiled = compiled.compiled
        self._require_prepared(compiled)
        self.stats.runs += 1
        from pypto.runtime.sim.launch import launch
        return launch(compiled, args, worker=self)

    def submit(self, compiled, *args, config=None) -> "DistributedRunHandle":
        """The reference's bounded asynchronous dispatch. The simulator runs the dispatch now, so the handle
        is complete when it is returned; an error is kept and raised by `result()`, as a device run's is."""
        try:
            return DistributedRunHandle(self.run(compiled, *args), None)
        except Exception as e:              # noqa: BLE001 — handed back through result()
            return DistributedRunHandle(None, e)

    # ------------------------------------------------------------------ stacked tensors
    def alloc_stacked_tensor(self, host, dtype=None, *, worker_ids=None) -> "StackedDeviceTensor":
        """Shard `host` along dim 0, shard i on rank i: one resident tensor a HOST orchestrator indexes as x[r].
        `worker_ids` (which chip worker holds which shard on a device) must name every rank once."""
        from pypto.interop import as_array
        arr = as_array(host, "alloc_stacked_tensor")
        ranks = self.distributed_config.world_size
        if worker_ids is not None and sorted(int(w) for w in worker_ids) != list(range(ranks)):
            raise ValueCheckError(f"alloc_stacked_tensor: worker_ids {list(worker_ids)} must name each of the {ranks} "
                             "ranks once")
        if arr.ndim < 1 or arr.shape[0] != ranks:
            raise ValueCheckError(f"alloc_stacked_tensor: dim 0 of a {list(arr.shape)} tensor must be the {ranks} ranks "
                             "of the world")
        tensor = self.alloc_tensor(arr.shape, dtype if dtype is not None else arr.dtype, init=arr)
        tensor.__class__ = StackedDeviceTensor       # the worker's own tensor, typed as the stacked kind
        return tensor

    def free_stacked_tensor(self, stacked: "StackedDeviceTensor") -> None:
        self.free_tensor(stacked)

    def copy_stacked_from(self, stacked: "StackedDeviceTensor", host_out) -> None:
        """Every shard back into `host_out` (same shape as the stacked tensor)."""
        from pypto.interop import as_array
        self.copy_from(stacked, as_array(host_out, "copy_stacked_from"))

    def release_inherited_host_tensor_refs(self) -> None:
        """Nothing is forked on the simulator, so no host tensor is retained for child processes."""

    def _require_prepared(self, compiled) -> None:
        if not any(compiled is p for p in self.programs):
            raise ValueCheckError(f"{compiled!r} is not prepared on this worker: pass it to "
                                  "prepare(extra_compiled=[...]) or DistributedWorker([...])")

    def register(self, compiled):
        """A handle of a prepared program: `handle(*args)` is `rt.run(compiled, *args)` (the reference's explicit
        dispatch). The world was set up by prepare(), so there is nothing more to load."""
        from pypto.runtime.worker import RegistrationHandle, _Registration
        self._check_open("register")
        if isinstance(compiled, RegistrationHandle):
            compiled = compiled.compiled
        self._require_prepared(compiled)
        reg = self._registrations.get(id(compiled))
        if reg is None:
            reg = self._registrations[id(compiled)] = _Registration(compiled)
        return RegistrationHandle(self, reg)

    def __repr__(self) -> str:
        names = ", ".join(p.program.name for p in self.programs)
        return f"DistributedWorker([{names}], ranks={self.distributed_config.world_size})"


def _check_callbacks(programs: list, callbacks: dict, overrides: dict) -> None:
    declared: dict = {}
    for p in programs:
        for name, f in p.sub_workers.items():
            declared[name] = f
    unknown = sorted(n for n in overrides if n not in declared)
    if unknown:
        raise ValueCheckError(f"sub_worker_overrides names {unknown}, which are not sub-workers of any prepared "
                         f"program (HOST SubWorkers declared: {sorted(declared) or 'none'})")
    for n, fn in overrides.items():
        if not callable(fn):
            raise ValueCheckError(f"override for '{n}' is not callable: {fn!r}")
    missing = sorted(n for n, f in declared.items() if f.requires_runtime_binding and n not in callbacks
                     and n not in overrides)
    if missing:
        raise ValueCheckError(f"runtime-bound SubWorker callback(s) {missing} have no implementation: pass "
                         f"prepare(callbacks={{{', '.join(repr(m) + ': fn' for m in missing)}}})")
    unknown = sorted(n for n in callbacks if n not in declared)
    if unknown:
        raise ValueCheckError(f"prepare(callbacks=...) names {unknown}, which no prepared program declares as a "
                         f"HOST SubWorker (declared: {sorted(declared) or 'none'})")
    concrete = sorted(n for n in callbacks if not declared[n].requires_runtime_binding)
    if concrete:
        raise ValueCheckError(f"SubWorker(s) {concrete} have a body of their own; only `...` SubWorkers take a callback",
                              hint="bind a callback to a SubWorker whose body is `...`, or use sub_worker_overrides=")
    for n, fn in callbacks.items():
        if not callable(fn):
            raise ValueCheckError(f"callback for '{n}' is not callable: {fn!r}")


class StackedDeviceTensor(DeviceTensor):
    """A DeviceTensor sharded along dim 0: shard i lives on rank i (`alloc_stacked_tensor`)."""

    @property
    def shards(self) -> int:
        return self.shape[0]


class DistributedRunHandle:
    """What `submit` returns: `result()` / `wait()` give the dispatch's result or raise its error."""

    def __init__(self, value, error):
        self._value, self._error = value, error

    @property
    def done(self) -> bool:
        return True

    def result(self, timeout=None):
        if self._error is not None:
            raise self._error
        return self._value

    wait = result
