"""Test helper: hand a DSL-written program to InferTileMemorySpace the way a converter would.

DSL producers always state their target_memory (Vec by default), and the pass keeps a stated space.
A converter that wants the readers to decide marks its producers; `open_landing_spaces` marks every
tile.load / tile.create of a program so the demand-driven retargeting can be tested on DSL input.
"""

from pypto.ir.expr import Call
from pypto.ir.visitor import IRMutator
from pypto.passes.infer_tile_memory_space.tile_memory_demand import leave_memory_to_demand


class _Mark(IRMutator):
    def mutate_call(self, c):
        c = self.mutate_children(c)
        if isinstance(c, Call) and getattr(c.op, "name", None) in ("tile.load", "tile.create"):
            return leave_memory_to_demand(c)
        return c


def open_landing_spaces(program):
    """The program with every tile.load / tile.create left for InferTileMemorySpace to place."""
    mark = _Mark()
    return program.replace(functions={n: f.replace(body=mark.mutate(f.body)) for n, f in program.functions.items()})
