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
from pypto.runtime.config import RunConfig, default_config, require_simulator

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
        self.config = config or default_config()
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
        from pypto.runtime.sim.poison import poisoned
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
        from pypto.interop import as_array
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
        from pypto.runtime.sim.launch import call_plans
        call_plans(compiled)
        _ = compiled.sim                         # generate the simulator code now, not on the first call
        return RegisteredProgram(self, compiled)

    def run(self, compiled, *args):
        """Run `compiled` with host arrays, scalars and this worker's DeviceTensors (used in place)."""
        self._check_open()
        if isinstance(compiled, RegisteredProgram):
            compiled = compiled.compiled
        self.stats.runs += 1
        from pypto.runtime.sim.launch import launch
        return launch(compiled, args, worker=self)
