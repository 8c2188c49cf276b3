"""L1 streaming of AutoTileMatmulL0: when the whole Mat operands overflow Mat (L1) and each is a plain
2-D `tile.load` of a GM window (or the `tile.transpose_view` of one), every K step loads just its
[m, k] / [k, n] blocks from GM into Mat (a transposed operand loads the [k, m] / [n, k] block and
transposes it), so e.g. a 512 x 512 x 512 FP32 matmul compiles.

    a_mat = load(a, [0, 0], [M, K], Mat)  →  per K step: a_l1 = load(a, [mi, ko], [m, k], Mat)
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.ops.registry import create_op_call
from pypto.ir.expr import Var
from pypto.ir.stmt import AssignStmt
from pypto.passes.auto_tile_matmul_l0.ir_queries import op_name, plus


class L1Streaming:
    """Mixin of the tiler: needs `self.defs` and `self.platform`."""

    def gm_window(self, mat: Var):
        """(tensor, row offset, col offset, transposed) when `mat` is a plain tile.load of a 2-D GM window
        into Mat, or the tile.transpose_view of one (a `*_trans=True` operand: transposed=True)."""
        value = self.defs.get(mat)
        transposed = op_name(value) == "tile.transpose_view" and isinstance(value.args[0], Var)
        if transposed:
            value = self.defs.get(value.args[0])
        if op_name(value) != "tile.load" or value.kwargs.get("target_memory") is not MemorySpace.Mat:
            return None
        offsets = getattr(value.args[1], "elements", None)
        if offsets is None or len(offsets) != 2:
            return None
        return value.args[0], offsets[0], offsets[1], transposed

    def l1_stream(self, a: Var, b: Var):
        """Both operands' GM windows when the Mat tiles behind them (a transposed operand counts its
        loaded source too: the transpose is its own buffer) overflow Mat (L1), else None."""
        wa, wb = self.gm_window(a), self.gm_window(b)
        need = sum(v.type.nbytes() * (2 if w is not None and w[3] else 1) for v, w in ((a, wa), (b, wb)))
        if need <= self.platform.space_capacity(MemorySpace.Mat):
            return None
        return (wa, wb) if wa is not None and wb is not None else None


def stream_block(window, row, col, rows: int, cols: int, name: str, out: list, span) -> Var:
    """Load the [rows, cols] block at (row, col) of an operand's GM window into Mat (appending the
    statements to `out`): a transposed operand loads the [cols, rows] block at (col, row) of its
    tensor and takes its tile.transpose_view."""
    tensor, r0, c0, transposed = window
    if transposed:
        row, col, rows, cols = col, row, cols, rows
    load = create_op_call("tile.load", [tensor, [plus(r0, row, span), plus(c0, col, span)], [rows, cols],
                                        [rows, cols]], {"target_memory": MemorySpace.Mat}, span)
    block = Var(name + ("_src" if transposed else ""), load.type, span)
    out.append(AssignStmt(block, load, span))
    if transposed:
        view = create_op_call("tile.transpose_view", [block], {}, span)
        block = Var(name, view.type, span)
        out.append(AssignStmt(block, view, span))
    return block
