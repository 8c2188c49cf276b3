"""Composite ops never execute on the simulator: LowerCompositeOps expands them into primitives.

The chip has no sin / cos / select / quant_mx instruction, so the simulator has none either: a
composite call that reaches it means the pass pipeline was skipped, and running a numpy
stand-in (np.sin) would hide exactly the lowering bug the simulator exists to expose.
"""

from __future__ import annotations

from pypto.errors import SimulationError

COMPOSITE_OPS = ("tile.sin", "tile.cos", "tile.select", "tile.tquant_mx")


def _rejecting(name: str):
    def op(ctx, out, *args, **kwargs):
        raise SimulationError(f"{name} reached the simulator un-lowered; it is a composite op with no hardware "
                              "instruction", hint="run the Default pipeline (LowerCompositeOps expands it into "
                                                  "primitive tile ops) before simulating")
    return op


def table() -> dict:
    return {name: _rejecting(name) for name in COMPOSITE_OPS}
