"""One core side's finished body of a mixed kernel: Algorithm phase 2, steps 4 to 10, in order.

    build (construct.py)          keep this side's statements; boundary moves → tpush / tpop
    repoint (versions.py)         tensor versions only the other side defines → this side's nearest
    repair yields (loop_repair)   dangling yields → the carry of their slot
    DCE (dce.py)                  liveness with carry pruning, to a fixpoint
    stale carries (loop_repair)   a repaired carry this side still reads is an error
    tfrees (pipe_setup.py)        every consumer-side pop gets its free

A value the side still reads but never binds is a split it cannot make: a clear error names it.
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.function import Function
from pypto.ir.ops.registry import CUBE, VECTOR
from pypto.passes.analysis import defined_vars
from pypto.passes.expand_mixed_kernel.affinity import CUBE_SPACES
from pypto.passes.expand_mixed_kernel.construct import SideBuilder, fill_defs
from pypto.passes.expand_mixed_kernel.dce import eliminate, free_vars
from pypto.passes.expand_mixed_kernel.gm_fence import plan_fences
from pypto.passes.expand_mixed_kernel.loop_repair import check_stale_carries, repair_yields
from pypto.passes.expand_mixed_kernel.pipe_setup import insert_tfrees
from pypto.passes.expand_mixed_kernel.versions import VersionLinks, repoint_dangling

_OTHER_SPACES = {CUBE: frozenset({MemorySpace.Vec}), VECTOR: CUBE_SPACES}


def side_body(func: Function, side: str, platform_name: str):
    builder = SideBuilder(side, platform_name, plan_fences(func.body), fill_defs(func.body))
    body = builder.body(func.body)
    body = repoint_dangling(body, VersionLinks(func.body), set(func.params))
    foreign = _OTHER_SPACES[side]
    body, fallbacks = repair_yields(body, set(func.params) | set(defined_vars(body)))
    body = eliminate(body, set(), func.params, foreign)
    check_stale_carries(body, fallbacks, func.name, side)
    body = insert_tfrees(body, builder.carriers)
    loose = free_vars(func.params, body)
    if loose:
        raise UnsupportedError(f"ExpandMixedKernel: kernel {func.name}: the {side} side reads "
                               f"{', '.join(v.name for v in loose)}, which only the other core computes",
                               func.span, hint="move the value across explicitly with pl.move (a tile) or "
                                               "compute it on both sides (a scalar)")
    return body
