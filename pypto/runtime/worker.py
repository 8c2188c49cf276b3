"""ChipWorker and DeviceTensor: a long-lived handle on one (simulated) chip, with resident tensors.

    with ChipWorker(config=RunConfig(platform="a2a3sim")) as worker:
        w = worker.alloc_tensor([64, 64], pl.FP32, init=weights)      # copied to the device once
        out = worker.alloc_tensor([64, 64], pl.FP32)
        step = worker.register(compiled)                                # a reusable handle
        for x in batches:
            step(x, w, out)                     # w and out stay on the device: no copy in or out per call
        result = worker.copy_from(out)

The reference's raw forms work too: `worker.alloc_tensor(shape, torch.float32)` (torch dtypes as
well as numpy ones and pl dtypes), `worker.copy_from(host.data_ptr(), t.data_ptr, t.nbytes)` and
`worker.copy_to(t.data_ptr, host.data_ptr(), t.nbytes)` (the device range is checked against this
worker's live tensors; the host pointer is the caller's to keep alive). `register` returns a
RegistrationHandle: call it, `with handle:` it, or `handle.unregister()` it early; registering the
same program twice gives aliases of one registration.

A DeviceTensor is the chip's own memory: runs read and write it in place, so nothing moves
between host and device unless you call copy_to / copy_from (counted in `worker.stats`).
Host numpy arrays may be mixed in; they go through the usual per-call copies. Inside
`with worker:` a CompiledProgram called directly runs on that worker. On the simulator
platforms device memory is host memory owned by the worker; `close()` frees it.
"""

from __future__ import annotations

import contextvars
import ctypes
from dataclasses import dataclass
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

    @property
    def data_ptr(self) -> int:
        """The address of the tensor's device memory (on the simulator: the worker-owned host buffer)."""
        if self._array is None:
            raise ValueCheckError(f"{self!r} was freed", hint="allocate a new tensor with worker.alloc_tensor")
        return int(self._array.ctypes.data)

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
class _Registration:
    """One program loaded on a worker (what every alias handle of it shares)."""
    compiled: object
    active: bool = True
    calls: int = 0


class RegistrationHandle:
    """`worker.register(compiled)`: call it like the program; it always runs on its worker.
    `unregister()` (or leaving `with handle:`) releases it; calling it afterwards is an error."""

    def __init__(self, worker: "ChipWorker", registration: _Registration):
        self.worker = worker
        self._registration = registration

    @property
    def compiled(self):
        return self._registration.compiled

    @property
    def calls(self) -> int:
        return self._registration.calls

    @property
    def registered(self) -> bool:
        return self._registration.active and not self.worker.closed

    def __call__(self, *args):
        if not self._registration.active:
            raise ValueCheckError(f"this handle of {self.compiled!r} was unregistered",
                                  hint="register the program again with worker.register(compiled)")
        self._registration.calls += 1
        return self.worker.run(self.compiled, *args)

    run = __call__

    def unregister(self) -> None:
        """Release the registration (all aliases of it); a second call does nothing."""
        if self._registration.active:
            self._registration.active = False
            self.worker._registrations.pop(id(self.compiled), None)

    def __enter__(self) -> "RegistrationHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.unregister()

    def __repr__(self) -> str:
        state = "" if self._registration.active else ", unregistered"
        return f"RegistrationHandle({self.compiled!r}{state})"


RegisteredProgram = RegistrationHandle           # the earlier name


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
        self._registrations: dict = {}           # id(compiled) → _Registration
        self._loaded: dict = {}                  # id(compiled) → compiled, each program loaded here
        self.loaded_programs = 0                 # programs made ready to run here (register, or a first run)

    @property
    def aicpu_dlopen_count(self) -> int:
        """The reference's load counter: programs loaded onto this worker, once each however often they run
        (on the simulator, loading is generating and binding the program's simulator code)."""
        return self.loaded_programs

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
        for reg in self._registrations.values():
            reg.active = False
        self._registrations.clear()
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ValueCheckError("this ChipWorker is closed", hint="create a new ChipWorker")

    # ------------------------------------------------------------------ memory
    def alloc_tensor(self, shape: Sequence[int], dtype, init=None) -> DeviceTensor:
        """A resident tensor of a pl / numpy / torch dtype; `init` (an array or a scalar) is copied in once,
        else contents are undefined."""
        self._check_open()
        from pypto.interop import numpy_dtype_of
        try:
            dt = dtype if isinstance(dtype, DataType) else DataType.from_numpy(numpy_dtype_of(dtype))
        except Exception:
            raise TypeCheckError(f"alloc_tensor: {dtype!r} is not a dtype pypto can hold",
                                 hint="pass a pl dtype (pl.FP32), a numpy dtype or a torch dtype") from None
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

    def _device_range(self, ptr: int, nbytes: int, what: str) -> None:
        """Check `[ptr, ptr + nbytes)` lies inside one live tensor of this worker (a raw copy's device side)."""
        for t in self._tensors:
            base = t.data_ptr
            if base <= ptr and ptr + nbytes <= base + t.nbytes:
                return
        raise ValueCheckError(f"{what}: device range 0x{ptr:x} + {nbytes} bytes is not inside a live tensor of "
                              "this ChipWorker", hint="pass t.data_ptr of a tensor from this worker's alloc_tensor")

    def copy_to(self, tensor, host, nbytes: Optional[int] = None) -> None:
        """Host → device: `copy_to(tensor, host)` (an array of the tensor's shape, or a scalar to fill with),
        or the raw form `copy_to(dst_dev_ptr, src_host_ptr, nbytes)`."""
        if isinstance(tensor, int) and not isinstance(tensor, bool):
            nbytes = _raw_count("copy_to", host, nbytes)
            self._check_open()
            self._device_range(tensor, nbytes, "copy_to")
            ctypes.memmove(tensor, host, nbytes)
            self.stats.copies_to_device += 1
            self.stats.bytes_to_device += nbytes
            return
        dst = tensor.device_array(self)
        from pypto.interop import as_array
        src = np.asarray(host) if np.isscalar(host) else as_array(host, "copy_to source")
        if src.ndim and src.shape != dst.shape:
            raise TypeCheckError(f"copy_to: host array has shape {src.shape}, the device tensor {list(dst.shape)}")
        np.copyto(dst, src, casting="same_kind" if src.ndim else "unsafe")
        self.stats.copies_to_device += 1
        self.stats.bytes_to_device += dst.nbytes

    def copy_from(self, tensor, out=None, nbytes: Optional[int] = None):
        """Device → host: `copy_from(tensor)` (a new array), `copy_from(tensor, out)` (`out` filled in place),
        or the raw form `copy_from(dst_host_ptr, src_dev_ptr, nbytes)`."""
        if isinstance(tensor, int) and not isinstance(tensor, bool):
            nbytes = _raw_count("copy_from", out, nbytes)
            self._check_open()
            self._device_range(out, nbytes, "copy_from")
            ctypes.memmove(tensor, out, nbytes)
            self.stats.copies_from_device += 1
            self.stats.bytes_from_device += nbytes
            return None
        src = tensor.device_array(self)
        if out is None:
            out = src.copy()
        else:
            from pypto.interop import as_array
            np.copyto(as_array(out, "copy_from destination"), src)
        self.stats.copies_from_device += 1
        self.stats.bytes_from_device += src.nbytes
        return out

    # ------------------------------------------------------------------ running
    def register(self, compiled) -> RegistrationHandle:
        """Load `compiled` now (so mistakes surface here, not on the first dispatch) and return its handle."""
        self._check_open()
        if isinstance(compiled, RegistrationHandle):
            compiled = compiled.compiled
        reg = self._registrations.get(id(compiled))
        if reg is None:
            if id(compiled) not in self._loaded:
                self._load(compiled)
            reg = self._registrations[id(compiled)] = _Registration(compiled)
        return RegistrationHandle(self, reg)

    def _load(self, compiled) -> None:
        from pypto.runtime.sim.launch import call_plans
        platform = getattr(compiled, "platform", None)
        if platform is not None and platform != self.platform:
            raise ValueCheckError(f"{compiled!r} was compiled for {platform}, this ChipWorker runs {self.platform}",
                                  hint="compile with the platform you dispatch on")
        call_plans(compiled)
        _ = compiled.sim                         # generate the simulator code now, not on the first call
        self._loaded[id(compiled)] = compiled
        self.loaded_programs += 1

    def run(self, compiled, *args, _spans=None):
        """Run `compiled` with host arrays, scalars and this worker's DeviceTensors (used in place)."""
        self._check_open()
        if isinstance(compiled, RegistrationHandle):
            compiled = compiled.compiled
        if id(compiled) not in self._loaded:
            self._load(compiled)
        self.stats.runs += 1
        from pypto.runtime.sim.launch import launch
        return launch(compiled, args, worker=self, spans=_spans)


class PreparedProgram(ChipWorker):
    """`compiled.prepare()`: a ChipWorker with one program registered, called like the program.

        with compiled.prepare() as rt:
            w = rt.alloc_tensor(weight.shape, weight.dtype, init=weight)    # resident
            rt(x, w, out)
    """

    def __init__(self, compiled, config: Optional[RunConfig] = None):
        if config is None:
            config = RunConfig(platform=compiled.platform)
        super().__init__(config)
        self.compiled = compiled
        self.handle = self.register(compiled)

    def __call__(self, *args):
        return self.handle(*args)

    def __enter__(self) -> "PreparedProgram":
        super().__enter__()
        return self


def _raw_count(what: str, ptr, nbytes) -> int:
    if not isinstance(ptr, int) or isinstance(ptr, bool) or nbytes is None:
        raise TypeCheckError(f"{what}(dst_ptr, src_ptr, nbytes): the raw form takes two integer addresses and a "
                             "byte count", hint="or pass the DeviceTensor itself")
    if nbytes < 0:
        raise ValueCheckError(f"{what}: negative byte count {nbytes}")
    return int(nbytes)
