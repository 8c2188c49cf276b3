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
class CostModel:
    """Estimated time of simulated work, for the swimlane timeline (pypto.debug.swimlane).

    The simulator computes values, not time; these rates turn each op into a duration so that
    overlap, pipe stalls and dependency bubbles show on a timeline. They are round numbers of
    the right order for the chip (bandwidth per core, peak per core), not measurements.
    """
    dma_latency_ns: float = 400.0            # fixed cost of one GM <-> on-chip transfer
    dma_bytes_per_ns: float = 64.0           # per-core GM bandwidth (64 GB/s)
    move_bytes_per_ns: float = 256.0         # on-chip moves (Mat -> Left / Right, Acc -> Mat, Vec -> Vec)
    cube_flops_per_ns: float = 8192.0        # per AIC core at FP16 / BF16 (FP32 runs at a quarter, INT8 double)
    vector_bytes_per_ns: float = 256.0       # per AIV core: 128 B per cycle at ~2 GHz
    vector_issue_ns: float = 20.0            # fixed cost of one vector instruction
    scalar_op_ns: float = 2.0                # a scalar / bookkeeping op (pipe setup, sync flags, views)
    pipe_latency_ns: float = 150.0           # tpush -> tpop hand-over between the cores of a cluster
    pipe_bytes_per_ns: float = 128.0         # bytes through a cross-core pipe
    task_launch_ns: float = 1000.0           # submit -> kernel start (the dispatcher's pick-up)
    host_submit_ns: float = 200.0            # the orchestrator's cost of submitting one task


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
    cost: CostModel = CostModel()            # estimated op timings for the swimlane timeline

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
    clusters=36,
    cost=CostModel(dma_bytes_per_ns=96.0, cube_flops_per_ns=16384.0, pipe_latency_ns=60.0, pipe_bytes_per_ns=256.0))

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
