"""pld.tensor.broadcast → barrier, staged pld.tile.get from the root, epilogue (seed 001). 3 For / 3 If.

The barrier (generation 1) says the root's data is staged; every rank then gets the root's
window into its own (on the root the get reads itself: a no-op copy), and retires its credit.

    before:  target = pld.tensor.broadcast(target, signal, root=0)
    after:   barrier(1); stage = tile.create([1, cols]); pld.tile.get(target, 0, target, stage); cells -= 1
"""

from __future__ import annotations

from pypto.ir.dtypes import INT32
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import MakeTuple, const
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import (CommHandles, emit_barrier, emit_epilogue_reset,
                                                              stage_cols, static_2d, validate_mesh_signal)


def lower_broadcast_rule(call, args: tuple, b: LoweringBuilder):
    op = "pld.tensor.broadcast"
    target, signal = args
    validate_mesh_signal(op, signal)
    rows, cols = static_2d(op, target.type)
    h = CommHandles.of(b, signal)
    emit_barrier(b, h, signal, 1)
    dtype = target.type.dtype
    stage = b.bind("get_stage", b.op("tile.create", [MakeTuple([const(1), const(stage_cols(op, cols, dtype.get_byte()))])],
                                     {"dtype": dtype, "target_memory": MemorySpace.Vec}))
    b.emit_eval(b.op("pld.tile.get", [target, const(int(call.kwargs.get("root", 0)), INT32), target, stage,
                                      MakeTuple([const(0), const(0)]), MakeTuple([const(0), const(0)]),
                                      MakeTuple([const(rows), const(cols)])]))
    emit_epilogue_reset(b, h, signal, 1)
    return target
