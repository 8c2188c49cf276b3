"""The backend's data paths, checked on final IR before the simulator runs a kernel.

The hardware moves tiles only along its memory graph (`Platform.data_paths` in
pypto/ir/platform.py): e.g. a2a3 has no Vec → Mat or Acc → Vec path, a5 has both. It also
stores Acc tiles to GM only as INT32 / FP32 / FP16 / BF16 (the FIXPIPE formats). A kernel that
asks for anything else would fail on the chip, so the simulator refuses it with the op and line.

    check_data_paths(kernel, get_platform("a2a3"))     # raises SimulationError on an illegal move
"""

from __future__ import annotations

from pypto.errors import SimulationError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import collect

_DDR = MemorySpace.DDR


def _space(e):
    t = getattr(e, "type", None)
    if isinstance(t, TensorType):
        return _DDR
    return t.memory_space if isinstance(t, TileType) else None


def _transfers(call: Call):
    """(source space, destination space) of a data-moving op, or None."""
    name = call.op.name
    if name in ("tile.move", "tile.extract"):
        return _space(call.args[0]), call.kwargs.get("target_memory")
    if name == "tile.load":
        return _DDR, call.kwargs.get("target_memory")
    if name == "tile.store":
        return _space(call.args[0]), _DDR
    return None


def check_data_paths(func, platform) -> None:
    calls = collect(func.body, lambda n: isinstance(n, Call) and not n.is_function_call())
    for call in calls:
        path = _transfers(call)
        if path is None or None in path or path[0] == path[1] == MemorySpace.Mat:
            continue
        src, dst = path
        if (src, dst) not in platform.data_paths:
            legal = sorted(d.name for s, d in platform.data_paths if s is src)
            raise SimulationError(f"{call.op.name}: {platform.name} has no {src.name} → {dst.name} data path "
                                  f"(kernel {func.name})", call.span,
                                  hint=f"from {src.name} this backend moves to: {', '.join(legal) or 'nothing'}")
        if call.op.name == "tile.store" and src is MemorySpace.Acc:
            dtype = call.args[0].type.dtype
            if dtype.name not in platform.acc_store_dtypes:
                raise SimulationError(f"tile.store: an Acc tile is stored to GM as {dtype.name}, but {platform.name} "
                                      f"stores Acc only as {' / '.join(platform.acc_store_dtypes)} "
                                      f"(kernel {func.name})", call.span,
                                      hint="accumulate in FP32 / INT32 and cast on the vector side")
