"""Hardware facts of each backend, in one table read by passes (capacity checks, data paths)
and by the simulator (arena sizes, allowed moves).

Numbers from the reference's SoC description: UB is capped below its physical size because
the vendor's tile library corrupts its top ~8 KB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir.enums import MemorySpace as M

KB = 1024


@dataclass(frozen=True)
class Platform:
    name: str                      # "a2a3" | "a5"
    backend_type: str              # "Ascend910B" | "Ascend950"
    capacity: dict                 # MemorySpace → usable bytes per core
    data_paths: frozenset          # (src, dst) pairs a tile.move / load / store may take
    clusters: int                  # clusters of 1 AIC + 2 AIV
    alignment: int = 32
    acc_store_dtypes: tuple = ("INT32", "FP32", "FP16", "BF16")
    aic_spaces: frozenset = frozenset({M.Mat, M.Left, M.Right, M.Acc, M.Bias, M.LeftScale, M.RightScale})
    aiv_spaces: frozenset = frozenset({M.Vec})

    def space_capacity(self, space: M) -> int:
        return self.capacity.get(space, 0)


_COMMON_PATHS = {(M.DDR, M.Vec), (M.DDR, M.Mat), (M.Vec, M.DDR), (M.Mat, M.Left), (M.Mat, M.Right), (M.Mat, M.Bias),
                 (M.Acc, M.Mat), (M.Acc, M.DDR), (M.Vec, M.Vec)}

A2A3 = Platform(
    name="a2a3", backend_type="Ascend910B",
    capacity={M.Vec: 184 * KB, M.Mat: 512 * KB, M.Left: 64 * KB, M.Right: 64 * KB, M.Acc: 128 * KB, M.Bias: 1 * KB},
    data_paths=frozenset(_COMMON_PATHS), clusters=24)

A5 = Platform(
    name="a5", backend_type="Ascend950",
    capacity={M.Vec: 240 * KB, M.Mat: 512 * KB, M.Left: 64 * KB, M.Right: 64 * KB, M.Acc: 256 * KB, M.Bias: 4 * KB,
              M.LeftScale: 4 * KB, M.RightScale: 4 * KB},
    data_paths=frozenset(_COMMON_PATHS | {(M.Vec, M.Mat), (M.Acc, M.Vec), (M.Mat, M.LeftScale), (M.Mat, M.RightScale)}),
    clusters=36)

PLATFORMS = {"a2a3": A2A3, "a5": A5}
BACKEND_TO_PLATFORM = {"Ascend910B": A2A3, "Ascend950": A5}


def get_platform(name: str) -> Platform:
    """Accepts "a2a3", "a2a3sim", "a5", "a5sim", or a backend type name."""
    key = name[:-3] if name.endswith("sim") else name
    if key in PLATFORMS:
        return PLATFORMS[key]
    if name in BACKEND_TO_PLATFORM:
        return BACKEND_TO_PLATFORM[name]
    raise ValueError(f"unknown platform {name!r}; expected one of a2a3sim, a5sim, a2a3, a5")
