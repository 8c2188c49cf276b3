"""ChipWorker and DeviceTensor: a long-lived handle on one (simulated) chip, with resident tensors.

    with ChipWorker(config=RunConfig(platform="a2a3sim")) as worker:
        w = worker.alloc_tensor([64, 64], pl.FP32, init=weights)      # copied to the device once
        out = worker.alloc_tensor([64, 64], pl.FP32)
        step = worker.register(compiled)                                # a reusable handle
        for x in batches:
            step(x, w, out)                     # w and out stay on the device: no copy in or out per call
        result = worker.copy_from(out)

The reference's raw forms work too: `worker.alloc_tensor(shape, torch.float32)` (torch dtypes as
well as numpy ones and pl dtypes), `ptr = worker.malloc(nbytes)` (an integer device pointer, released
with `worker.free(ptr)`), `worker.copy_from(host.data_ptr(), t.data_ptr, t.nbytes)` and
`worker.copy_to(t.data_ptr, host.data_ptr(), t.nbytes)` (the device range is checked against this
worker's live allocations; the host pointer is the caller's to keep alive). Every raw call takes
`worker_id=` (0 on a ChipWorker, a rank on a DistributedWorker). `register` returns a
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


class WorkerClosedError(ValueCheckError, RuntimeError):
    """A worker used after close() (a RuntimeError, as the reference raises; a ValueCheckError as ever here)."""


class DeviceTensor:
    """A tensor resident in a worker's device memory (shape, dtype; contents stay on the device)."""

    def __init__(self, worker: "ChipWorker", array: np.ndarray, dtype: DataType, worker_id: int = 0):
        self.worker = worker
        self.worker_id = worker_id               # which chip of the worker holds it (a rank on a DistributedWorker)
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

    @property
    def closed(self) -> bool:
        return not self.registered

    def __call__(self, *args):
        self.worker._check_open("run")
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
        self._device_buffers: dict = {}          # (worker_id, pointer) → the bytes of every live allocation
        self._owned_tensors: dict = {}           # (worker_id, pointer) → the DeviceTensors of alloc_tensor
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
        """Free every allocation still live (tensors and malloc pointers) and every registration."""
        for t in self._owned_tensors.values():
            t._array = None
        self._owned_tensors.clear()
        self._device_buffers.clear()
        for reg in self._registrations.values():
            reg.active = False
        self._registrations.clear()
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self, op: str = "") -> None:
        if self._closed:
            called = f"{type(self).__name__}.{op}() called after close: " if op else ""
            raise WorkerClosedError(f"{called}this {type(self).__name__} is closed",
                                    hint=f"create a new {type(self).__name__}")

    @property
    def worker_ids(self) -> range:
        """The chips whose memory this worker addresses (`worker_id=` of the memory calls)."""
        return range(1)

    def _check_worker_id(self, worker_id, op: str) -> int:
        if isinstance(worker_id, bool) or not isinstance(worker_id, (int, np.integer)) or \
                int(worker_id) not in self.worker_ids:
            raise ValueCheckError(f"{type(self).__name__}.{op}(): worker_id={worker_id!r} is not one of this "
                                  f"worker's chips {list(self.worker_ids)}")
        return int(worker_id)

    # ------------------------------------------------------------------ memory
    def alloc_tensor(self, shape: Sequence[int], dtype, init=None, *, worker_id: int = 0) -> DeviceTensor:
        """A resident tensor of a pl / numpy / torch dtype; `init` (an array or a scalar) is copied in once,
        else contents are undefined."""
        self._check_open("alloc_tensor")
        worker_id = self._check_worker_id(worker_id, "alloc_tensor")
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
        tensor = DeviceTensor(self, poisoned(shape, dt.to_numpy()), dt, worker_id)
        key = (worker_id, tensor.data_ptr)
        self._device_buffers[key] = tensor._array
        self._owned_tensors[key] = tensor
        if init is not None:
            self.copy_to(tensor, init)
        return tensor

    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """`nbytes` of raw device memory on chip `worker_id`: its integer device pointer, for copy_to /
        copy_from and a matching free(ptr). close() releases what is not freed."""
        self._check_open("malloc")
        worker_id = self._check_worker_id(worker_id, "malloc")
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes <= 0:
            raise ValueCheckError(f"malloc: nbytes must be a positive int, got {nbytes!r}")
        from pypto.runtime.sim.poison import poisoned
        buf = poisoned((int(nbytes),), np.dtype(np.uint8))
        ptr = int(buf.ctypes.data)
        self._device_buffers[(worker_id, ptr)] = buf
        return ptr

    def free(self, ptr, *, worker_id: int = 0) -> None:
        """Release a pointer from malloc (a DeviceTensor is accepted too: the same as free_tensor)."""
        if isinstance(ptr, DeviceTensor):
            return self.free_tensor(ptr)
        self._check_open("free")
        worker_id = self._check_worker_id(worker_id, "free")
        key = (worker_id, ptr)
        if key in self._owned_tensors:
            raise ValueCheckError(f"free: 0x{ptr:x} is the memory of {self._owned_tensors[key]!r}",
                                  hint="release a DeviceTensor with free_tensor(tensor)")
        if key not in self._device_buffers:
            raise ValueCheckError(f"free: 0x{ptr:x} is not a live pointer from this worker's "
                                  f"malloc(..., worker_id={worker_id})",
                                  hint="pass the pointer malloc returned, once")
        del self._device_buffers[key]

    def free_tensor(self, tensor: DeviceTensor, *, worker_id: Optional[int] = None) -> None:
        tensor.device_array(self)
        if worker_id is not None and self._check_worker_id(worker_id, "free_tensor") != tensor.worker_id:
            raise ValueCheckError(f"free_tensor: {tensor!r} lives on worker_id={tensor.worker_id}, not {worker_id}")
        key = (tensor.worker_id, tensor.data_ptr)
        del self._owned_tensors[key]
        del self._device_buffers[key]
        tensor._array = None

    def _device_range(self, ptr: int, nbytes: int, what: str, worker_id: int = 0) -> None:
        """Check `[ptr, ptr + nbytes)` lies inside one live allocation of chip `worker_id` (a raw copy's device side)."""
        worker_id = self._check_worker_id(worker_id, what)
        for (wid, base), buf in self._device_buffers.items():
            if wid == worker_id and base <= ptr and ptr + nbytes <= base + buf.nbytes:
                return
        raise ValueCheckError(f"{what}: device range 0x{ptr:x} + {nbytes} bytes is not inside a live allocation "
                              f"of this {type(self).__name__} on worker_id={worker_id}",
                              hint="pass t.data_ptr of a tensor from this worker's alloc_tensor, or a malloc pointer")

    def copy_to(self, tensor, host, nbytes: Optional[int] = None, *, worker_id: int = 0) -> None:
        """Host → device: `copy_to(tensor, host)` (an array of the tensor's shape, or a scalar to fill with),
        or the raw form `copy_to(dst_dev_ptr, src_host_ptr, nbytes, worker_id=0)`."""
        if isinstance(tensor, int) and not isinstance(tensor, bool):
            nbytes = _raw_count("copy_to", host, nbytes)
            self._check_open("copy_to")
            self._device_range(tensor, nbytes, "copy_to", worker_id)
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

    def copy_from(self, tensor, out=None, nbytes: Optional[int] = None, *, worker_id: int = 0):
        """Device → host: `copy_from(tensor)` (a new array), `copy_from(tensor, out)` (`out` filled in place),
        or the raw form `copy_from(dst_host_ptr, src_dev_ptr, nbytes, worker_id=0)`."""
        if isinstance(tensor, int) and not isinstance(tensor, bool):
            nbytes = _raw_count("copy_from", out, nbytes)
            self._check_open("copy_from")
            self._device_range(out, nbytes, "copy_from", worker_id)
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
        self._check_open("register")
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
        self._check_open("run")
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
