"""PTO emitters for system.* ops and the core-identity queries (mirrors pypto/ir/ops/system.py).

    pl.system.bar_v()            →  pto.barrier <PIPE_V>
    pl.system.fence()            →  pto.fence.barrier_all #pto.fence_scope<gm>
    i = pl.tile.get_block_idx()  →  %i = arith.index_cast %__pypto_spmd_block_idx : i32 to index

The identity queries read synthetic trailing i32 parameters of the kernel (block_idx and
block_num together, subblock_idx on its own), which the kernel wrapper fills at launch.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits


def _barrier(pipe: str):
    def emit(ctx):
        ctx.emit(f"pto.barrier <{pipe}>")
    return emit


emits("system.bar_v")(_barrier("PIPE_V"))
emits("system.bar_m")(_barrier("PIPE_M"))
emits("system.bar_all")(_barrier("PIPE_ALL"))


@emits("system.fence")
def _fence(ctx):
    ctx.emit("pto.fence.barrier_all #pto.fence_scope<gm>")


def _identity(which: str):
    def emit(ctx):
        ctx.emit(f"{ctx.result} = arith.index_cast {ctx.spmd(which)} : i32 to index")
    return emit


emits("tile.get_block_idx")(_identity("block_idx"))
emits("tile.get_block_num")(_identity("block_num"))
emits("tile.get_subblock_idx")(_identity("subblock_idx"))
