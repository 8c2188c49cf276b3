"""pld.tensor.barrier → one credit-barrier generation + its epilogue (seed 001, `pld.tensor.barrier`).

Pure synchronisation: 3 For / 3 If (notify-all, wait-all Ge 1, reset -1). The result is the
signal itself, so `signal = pld.tensor.barrier(signal)` (the rebind idiom) keeps working; every
call restarts at generation 1 because the epilogue leaves the cells as it found them.

    before:  signal = pld.tensor.barrier(signal)
    after:   ctx = pld.get_comm_ctx(signal); me = pld.rank(ctx); n = pld.nranks(ctx)
             for peer: if peer != me: notify +1 / for src: if src != me: wait >= 1 / ... notify -1
"""

from __future__ import annotations

from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import (CommHandles, emit_barrier, emit_epilogue_reset,
                                                              validate_mesh_signal)


def lower_barrier_rule(call, args: tuple, b: LoweringBuilder):
    signal = args[0]
    validate_mesh_signal("pld.tensor.barrier", signal)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)
    emit_epilogue_reset(b, h, signal, 1)
    return signal
