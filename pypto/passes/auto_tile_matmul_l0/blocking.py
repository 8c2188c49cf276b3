"""M / N output blocking of AutoTileMatmulL0: an [M, N] result that overflows L0C is computed in
[m, n] blocks (full blocks, then the peeled partial row / column blocks), each a K loop whose Acc
tile is placed — stored to its window of the one consumer store's GM tensor, or assembled into one
[M, N] Mat scratch standing for the one Acc → Mat writeback — so no [M, N] Acc tile exists.

    c = matmul(l, r); out = store(c, [0, 0], out)
    →  for mi, (out_mi,) in pl.range(0, M, m, ...): for ni ...: <K loop>; store(acc_done, [mi, ni], out_ni)
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import IterArg, Var, const
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, YieldStmt
from pypto.ir.types import TileType
from pypto.passes.analysis import as_seq
from pypto.passes.auto_tile_matmul_l0.ir_queries import index_type, plus, segments


class OutputBlocking:
    """Mixin of the tiler: needs `k_loop` (KLoopEmitter)."""

    def output_grid(self, a, b, dims, tile, result: TileType, placement: "Placement", span, block=None) -> list:
        """The [M, N] output in [m, n] blocks: per region (full blocks, then the peeled partial row /
        column blocks) loops over its blocks (a loop only where there are several), each block a K loop
        whose Acc tile is placed (stored to its GM window, or assembled into a Mat scratch); the placement
        target is carried through every block."""
        (M, N, K), (m, n, k) = dims, tile
        regions = [(r, c) for r in segments(M, m) for c in segments(N, n)]
        stmts, current = list(placement.prelude), placement.start
        for i, (rows, cols) in enumerate(regions):
            last = i == len(regions) - 1
            final = placement.final if last else Var(f"{placement.name}_part", placement.carry_type, span)
            stmts += self.region(a, b, rows, cols, K, k, result, placement, current, final, span, block)
            current = final
        return stmts

    def region(self, a, b, rows, cols, K: int, k: int, result: TileType, placement: "Placement", current, final,
               span, block=None) -> list:
        """One region's blocks; `block(mi, ni, m, n, span) -> (statements, Acc Var)` computes one block
        (default: the K loop of extracts)."""
        name, carry_type = placement.name, placement.carry_type
        loops = [(axis, start, stop, step) for axis, (start, stop, step) in (("mi", rows), ("ni", cols))
                 if stop - start > step]
        index = {axis: Var(axis, index_type(), span) for axis, *_rest in loops}
        mi = index.get("mi", const(rows[0], span=span))
        ni = index.get("ni", const(cols[0], span=span))
        carries: list = []
        for axis, *_rest in loops:
            carries.append(IterArg(f"{name}_{axis}", carry_type, carries[-1] if carries else current, span))
        if block is None:
            stmts, acc = self.k_loop(a, b, mi, ni, rows[2], cols[2], K, k, result, None, span)
        else:
            stmts, acc = block(mi, ni, rows[2], cols[2], span)
        block = stmts
        placed = placement.place(acc, mi, ni, carries[-1] if carries else current, span)
        if not loops:
            return block + [AssignStmt(final, placed, span)]
        sv = Var(f"{name}_block", placed.type, span)
        body, value = block + [AssignStmt(sv, placed, span)], sv
        for depth in range(len(loops) - 1, -1, -1):
            axis, start, stop, step = loops[depth]
            rv = final if depth == 0 else Var(f"{name}_{axis}_done", carry_type, span)
            loop = ForStmt(index[axis], const(start, span=span), const(stop, span=span), const(step, span=span),
                           [carries[depth]], as_seq(body + [YieldStmt([value], span)], span), [rv], span=span)
            body, value = [loop], rv
        return body


class Placement:
    """Where the [m, n] Acc blocks of an M / N-tiled matmul go: `place(acc, mi, ni, current, span)` builds
    the call that puts one block into the carried target (`start` before the first block, `final`
    binding the last one; `prelude` statements create the target)."""

    def __init__(self, name: str, carry_type, start, final: Var, place, prelude=()):
        self.name, self.carry_type, self.start, self.final = name, carry_type, start, final
        self.place, self.prelude = place, list(prelude)


def direct_store(store: AssignStmt) -> Placement:
    """Each block stored straight to its window of the single consumer store's GM tensor."""
    base_r, base_c = store.value.args[1].elements
    out = store.value.args[2]

    def place(acc, mi, ni, current, span):
        return create_op_call("tile.store", [acc, [plus(base_r, mi, span), plus(base_c, ni, span)], current],
                              dict(store.value.kwargs), span)

    return Placement(out.name_hint, out.type, out, store.var, place)


def mat_scratch(move: AssignStmt, dims: tuple, span) -> Placement:
    """Each block assembled (Acc → Mat, the FIXPIPE writeback) into one [M, N] Mat scratch that stands for
    the single consumer `tile.move(result, target_memory=Mat)`, so the [M, N] result never sits in L0C."""
    create = create_op_call("tile.create", [list(dims)], {"dtype": move.var.type.dtype,
                                                          "target_memory": MemorySpace.Mat}, span)
    create = create.replace(type=move.var.type)          # readers keep seeing the move's tile type
    scratch = Var(f"{move.var.name_hint}_scratch", create.type, span)

    final = Var(move.var.name_hint, create.type, span)
    return Placement(move.var.name_hint, create.type, scratch, final, assemble_block,
                      [AssignStmt(scratch, create, span)])


def assemble_block(acc, mi, ni, current, span):
    return create_op_call("tile.assemble", [current, acc, [mi, ni]], {}, span).replace(type=current.type)
