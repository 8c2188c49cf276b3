"""Data paths a backend allows, checked on each core-side kernel (compiler-and-runtime.md §5.5).

After the split every remaining `tile.move` and `tile.store` runs on one core, so its
(source, destination) memory pair must be a hardware path of the platform: e.g. a2a3 has no
Acc → Vec or Vec → Mat path (those cross through the pipe instead), and no core stores a
Mat / Left / Right tile to GM.

    check_data_paths(aiv_function, platform)     # UnsupportedError naming the op, the pair, the fix
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import GlobalVar
from pypto.ir.function import Function
from pypto.ir.platform import Platform
from pypto.ir.types import TileType
from pypto.passes.analysis import calls_in


def _hint(src, dst) -> str:
    if dst is MemorySpace.DDR:
        return "store from Vec or Acc: move the tile there first (Mat → Left / Right feeds a matmul instead)"
    return "route the data through an allowed space (e.g. Acc → Mat → Left), or across cores with a Vec ↔ cube move"


MX_OPS = ("tile.matmul_mx", "tile.matmul_mx_acc", "tile.matmul_mx_bias")


def check_mx(func: Function, platform: Platform) -> None:
    """MX matmuls need the LeftScale / RightScale buffers of a5; name the op, not a missing path."""
    if platform.space_capacity(MemorySpace.LeftScale):
        return
    for c in calls_in(func.body):
        if not isinstance(c.op, GlobalVar) and c.op.name in MX_OPS:
            raise UnsupportedError(f"{c.op.name} (MX matmul) in {func.name} exists on a5 (Ascend950) only, not on "
                                   f"{platform.name} ({platform.backend_type})", c.span,
                                   hint="a2a3 has no LeftScale / RightScale buffers: use pl.matmul on FP16 / BF16 "
                                        "operands there")


def check_data_paths(func: Function, platform: Platform) -> None:
    check_mx(func, platform)
    for c in calls_in(func.body):
        if isinstance(c.op, GlobalVar) or c.op.name not in ("tile.move", "tile.store") or not c.args:
            continue
        src_t = c.args[0].type
        if not isinstance(src_t, TileType) or src_t.memory_space is None:
            continue
        src = src_t.memory_space
        dst = c.kwargs.get("target_memory") if c.op.name == "tile.move" else MemorySpace.DDR
        # a move within Vec or within Mat (a re-layout in the same buffer space) is always possible
        if dst is None or (src, dst) in platform.data_paths or (c.op.name == "tile.move" and src is dst
                                                                and src in (MemorySpace.Vec, MemorySpace.Mat)):
            continue
        what = getattr(c.args[0], "name_hint", "a tile")
        raise UnsupportedError(f"{c.op.name} of '{what}' in {func.name}: {platform.name} ({platform.backend_type}) "
                               f"has no {src.name} → {dst.name} data path", c.span, hint=_hint(src, dst))
