"""ChipWorker and DeviceTensor: a long-lived handle on one (simulated) chip, with resident tensors.

    with ChipWorker(config=RunConfig(platform="a2a3sim")) as worker:
        w = worker.alloc_tensor([64, 64], pl.FP32, init=weights)      # copied to the device once
        out = worker.alloc_tensor([64, 64], pl.FP32)
        step = worker.register(compiled)                                # a reusable handle
        for x in batches:
            step(x, w, out)                     # w and out stay on the device: no copy in or out per call
        result = worker.copy_from(out)

A DeviceTensor is the chip's own memory: runs read and write it in place, so nothing moves
between host and device unless you call copy_to / copy_from (counted in `worker.stats`).
Host numpy arrays may be mixed in; they go through the usual per-call copies. Inside
`with worker:` a CompiledProgram called directly runs on that worker. On the simulator
platforms device memory is host memory owned by the worker; `close()` frees it.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from pypto.errors import TypeCheckError, ValueCheckError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ParamDirection
from pypto.runtime.config import RunConfig, require_simulator

_CURRENT: contextvars.ContextVar = contextvars.ContextVar("pypto_chip_worker", default=None)


def current_worker() -> Optional["ChipWorker"]:
    """The worker of the innermost `with ChipWorker(...)` block, if any."""
    return _CURRENT.get()


class DeviceTensor:
    """A tensor resident in a worker's device memory (shape, dtype; contents stay on the device)."""

    def __init__(self, worker: "ChipWorker", array: np.ndarray, dtype: DataType):
        self.worker = worker
        self._array: Optional[np.ndarray] = array
        self.dtype = dtype
        self.shape = tuple(array.shape)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.get_byte() if self.shape else 0

    @property
    def freed(self) -> bool:
        return self._array is None

    def device_array(self, worker: "ChipWorker") -> np.ndarray:
        """The device memory itself (for the runtime; users go through copy_from)."""
        if self._array is None:
            raise ValueCheckError(f"{self!r} was freed", hint="allocate a new tensor with worker.alloc_tensor")
        if worker is not self.worker:
            raise ValueCheckError(f"{self!r} belongs to another ChipWorker")
        return self._array

    def numpy(self) -> np.ndarray:
        """A host copy of the contents (same as worker.copy_from(self))."""
        return self.worker.copy_from(self)

    def __repr__(self) -> str:
        state = ", freed" if self.freed else ""
        return f"DeviceTensor(shape={list(self.shape)}, dtype={self.dtype.name}{state})"


@dataclass
class WorkerStats:
    copies_to_device: int = 0
    copies_from_device: int = 0
    bytes_to_device: int = 0
    bytes_from_device: int = 0
    runs: int = 0


@dataclass
class RegisteredProgram:
    """`worker.register(compiled)`: call it like the program; it always runs on its worker."""
    worker: "ChipWorker"
    compiled: object
    calls: int = field(default=0)

    def __call__(self, *args):
        self.calls += 1
        return self.worker.run(self.compiled, *args)

    run = __call__


class ChipWorker:
    def __init__(self, config: Optional[RunConfig] = None, *, enable_sdma: bool = False):
        self.config = config or RunConfig()
        require_simulator(self.config.platform)
        self.platform = self.config.platform
        self.enable_sdma = enable_sdma
        self.stats = WorkerStats()
        self._tensors: list = []
        self._closed = False
        self._tokens: list = []

    # ------------------------------------------------------------------ lifetime
    def __enter__(self) -> "ChipWorker":
        self._check_open()
        self._tokens.append(_CURRENT.set(self))
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.reset(self._tokens.pop())
        self.close()

    def close(self) -> None:
        for t in self._tensors:
            t._array = None
        self._tensors.clear()
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ValueCheckError("this ChipWorker is closed", hint="create a new ChipWorker")

    # ------------------------------------------------------------------ memory
    def alloc_tensor(self, shape: Sequence[int], dtype, init=None) -> DeviceTensor:
        """A resident tensor; `init` (an array or a scalar) is copied in once, else contents are undefined."""
        self._check_open()
        dt = dtype if isinstance(dtype, DataType) else DataType.from_numpy(np.dtype(dtype))
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueCheckError(f"alloc_tensor: negative dimension in shape {list(shape)}")
        from pypto.runtime.sim.contexts import poisoned
        tensor = DeviceTensor(self, poisoned(shape, dt.to_numpy()), dt)
        self._tensors.append(tensor)
        if init is not None:
            self.copy_to(tensor, init)
        return tensor

    def malloc(self, nbytes: int) -> DeviceTensor:
        """Raw device bytes (a UINT8 tensor)."""
        from pypto.ir.dtypes import UINT8
        return self.alloc_tensor([int(nbytes)], UINT8)

    def free_tensor(self, tensor: DeviceTensor) -> None:
        tensor.device_array(self)
        self._tensors.remove(tensor)
        tensor._array = None

    free = free_tensor

    def copy_to(self, tensor: DeviceTensor, host) -> None:
        """Host → device: `host` (an array of the tensor's shape, or a scalar to fill with)."""
        dst = tensor.device_array(self)
        from pypto.runtime.sim.host_args import as_array
        src = np.asarray(host) if np.isscalar(host) else as_array(host, "copy_to source")
        if src.ndim and src.shape != dst.shape:
            raise TypeCheckError(f"copy_to: host array has shape {src.shape}, the device tensor {list(dst.shape)}")
        np.copyto(dst, src, casting="same_kind" if src.ndim else "unsafe")
        self.stats.copies_to_device += 1
        self.stats.bytes_to_device += dst.nbytes

    def copy_from(self, tensor: DeviceTensor, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Device → host: a new array, or `out` filled in place."""
        src = tensor.device_array(self)
        if out is None:
            out = src.copy()
        else:
            np.copyto(out, src)
        self.stats.copies_from_device += 1
        self.stats.bytes_from_device += src.nbytes
        return out

    # ------------------------------------------------------------------ running
    def register(self, compiled) -> RegisteredProgram:
        self._check_open()
        from pypto.runtime.sim.host_args import plan_params
        if compiled._plans is None:
            compiled._plans = plan_params(compiled.function)
        _ = compiled.sim                         # generate the simulator code now, not on the first call
        return RegisteredProgram(self, compiled)

    def run(self, compiled, *args):
        """Run `compiled` with host arrays, scalars and this worker's DeviceTensors (used in place)."""
        self._check_open()
        if isinstance(compiled, RegisteredProgram):
            compiled = compiled.compiled
        self.stats.runs += 1
        return run_with_devices(compiled, args, self)


def run_with_devices(compiled, args, worker: ChipWorker):
    """One call of `compiled` where DeviceTensor arguments are passed as device memory, without copies."""
    from pypto.runtime.sim.host_args import HostArgs, plan_params
    require_simulator(compiled.platform)
    if worker.platform != compiled.platform:
        raise ValueCheckError(f"the program was compiled for {compiled.platform}, the worker runs {worker.platform}")
    if compiled._plans is None:
        compiled._plans = plan_params(compiled.function)
    plans = compiled._plans
    n_inputs = sum(1 for p in plans if p.direction is not ParamDirection.Out)
    if len(args) == n_inputs and compiled.has_return:
        return_style = True                     # (also when every parameter is an input, as compiled(...) does)
    elif len(args) == len(plans):
        return_style = False
    else:
        raise TypeCheckError(f"'{compiled.entry}' takes {len(plans)} arguments ({', '.join(compiled.param_names)}) in "
                             f"place, or its {n_inputs} inputs in return style; got {len(args)}")
    given = iter(args)
    bound = []                                  # per plan: DeviceTensor, a host value, or None (allocated)
    for p in plans:
        bound.append(None if return_style and p.direction is ParamDirection.Out else next(given))
    host_plans = [p for p, a in zip(plans, bound) if not isinstance(a, DeviceTensor)]
    host_values = [a for p, a in zip(plans, bound) if not isinstance(a, DeviceTensor)
                   and not (return_style and p.direction is ParamDirection.Out)]
    host = HostArgs(host_plans, host_values, return_style=return_style, strict=worker.config.sim_strict,
                    pool=compiled._pool)
    host_iter = iter(host.sim_args)
    sim_args = []
    for p, a in zip(plans, bound):
        if isinstance(a, DeviceTensor):
            sim_args.append(_device_arg(p, a, worker))
        else:
            sim_args.append(next(host_iter))
    cfg = worker.config
    value = compiled._sim_for(cfg).run(compiled.entry, sim_args, schedule=cfg.sim_schedule, seed=cfg.sim_seed,
                             window=cfg.sim_task_window)
    host.write_back()
    return host.results(value) if return_style else None


def _device_arg(plan, tensor: DeviceTensor, worker: ChipWorker) -> np.ndarray:
    arr = tensor.device_array(worker)
    if plan.is_scalar:
        raise TypeCheckError(f"parameter '{plan.name}' is a scalar; got {tensor!r}")
    if arr.dtype != plan.dtype:
        raise TypeCheckError(f"parameter '{plan.name}' expects dtype {plan.dtype_name}, got {tensor!r}")
    if plan.static_shape is not None and arr.shape != plan.static_shape:
        raise TypeCheckError(f"parameter '{plan.name}' expects shape {list(plan.static_shape)}, got {tensor!r}")
    if plan.direction is ParamDirection.In:
        view = arr.view()
        view.flags.writeable = False            # an input the kernel must not write
        return view
    return arr
