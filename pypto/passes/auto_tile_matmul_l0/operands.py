"""Operand analysis of AutoTileMatmulL0: where a matmul's Left / Right operands live in Mat (through a
Mat → Left / Right move, or a Vec left operand staged in Mat on a platform with a Vec → Mat path), and
whether its result has the single consumer an M / N-tiled grid can replace (one GM store, or one
Acc → Mat writeback).

    l = pl.tile.move(a_mat, target_memory=Left)   →  mat_source(l, Left) is a_mat
"""

from __future__ import annotations

from typing import Optional

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import TileType, static_dims
from pypto.passes.analysis import used_vars
from pypto.passes.auto_tile_matmul_l0.blocking import Placement, assemble_block, mat_scratch
from pypto.passes.auto_tile_matmul_l0.ir_queries import op_name, readers


class OperandFinder:
    """Mixin of the tiler: needs `self.defs` (Var → defining value), `self.func`, `self.platform`."""

    def mat_source(self, operand, space: MemorySpace):
        """The static 2-D Mat tile feeding a Left / Right operand (through a tile.move), or None."""
        if not isinstance(operand, Var) or not isinstance(operand.type, TileType):
            return None
        src = operand
        value = self.defs.get(operand)
        if operand.type.memory_space is space and op_name(value) == "tile.move" and isinstance(value.args[0], Var):
            src = value.args[0]
        t = src.type
        if not isinstance(t, TileType) or t.memory_space is not MemorySpace.Mat or t.rank != 2:
            return None
        if static_dims(t.shape) is None or static_dims(t.valid_shape) != static_dims(t.shape):
            return None
        return src

    def vec_left(self, operand):
        """A Vec left operand (e.g. softmax probabilities feeding P @ V) on a platform with a Vec → Mat
        path (a5): (its Mat copy, [the tile.move making it]) so K steps extract Left slabs from Mat;
        (None, []) otherwise."""
        if not isinstance(operand, Var) or (MemorySpace.Vec, MemorySpace.Mat) not in self.platform.data_paths:
            return None, []
        src, value = operand, self.defs.get(operand)
        if operand.type.memory_space is MemorySpace.Left and op_name(value) == "tile.move":
            src = value.args[0]
        t = src.type if isinstance(src, Var) else None
        if (not isinstance(t, TileType) or t.memory_space is not MemorySpace.Vec or t.rank != 2
                or static_dims(t.shape) is None or static_dims(t.valid_shape) != static_dims(t.shape)):
            return None, []
        move = create_op_call("tile.move", [src], {"target_memory": MemorySpace.Mat}, operand.span)
        mat = Var(f"{src.name_hint}_mat", move.type, operand.span)
        return mat, [AssignStmt(mat, move, operand.span)]

    def single_store(self, var: Var, after: list) -> Optional[AssignStmt]:
        """The one `tile.store` of `var` among the statements after it, when nothing between them
        touches the output tensor (the store then may move up to the matmul)."""
        if readers(self.func.body, var) != 1:
            return None
        for j, x in enumerate(after):
            if isinstance(x, AssignStmt) and op_name(x.value) == "tile.store" and x.value.args[0] is var:
                out = x.value.args[2]
                if not isinstance(out, Var) or any(out in used_vars(y) for y in after[:j]):
                    return None
                return x
        return None

    def single_mat_writeback(self, var: Var, after: list, nbytes: int):
        """(placement, consumed statement ids) when the one reader of `var` in the same statement list
        writes it back to Mat — `tile.move(var, target_memory=Mat)`, or the `tile.assemble(scratch, var,
        [0, 0])` of a folded FIXPIPE cast — i.e. the result is used on-chip (e.g. as the next matmul's
        operand), and an [M, N] Mat scratch fits L1. The blocks then go into that scratch."""
        if readers(self.func.body, var) != 1 or nbytes > self.platform.space_capacity(MemorySpace.Mat):
            return None
        for x in after:
            if not (isinstance(x, AssignStmt) and isinstance(x.value, Call) and any(a is var for a in x.value.args)):
                continue
            if op_name(x.value) == "tile.move" and x.value.kwargs.get("target_memory") is MemorySpace.Mat:
                placement = mat_scratch(x, tuple(static_dims(var.type.shape)), x.span)
                self.replace[x.var] = placement.final
                return placement, {id(x)}
            scratch = x.value.args[0]
            create = next((y for y in after if isinstance(y, AssignStmt) and y.var is scratch), None)
            if (op_name(x.value) == "tile.assemble" and x.value.args[1] is var and create is not None
                    and op_name(create.value) == "tile.create" and readers(self.func.body, scratch) == 1
                    and static_dims(scratch.type.shape) == static_dims(var.type.shape)):
                return Placement(x.var.name_hint, x.var.type, scratch, x.var, assemble_block,
                                  [create]), {id(x), id(create)}
            return None
        return None
