"""FlattenTileNdTo2D, transposes: the scratch tile `pto.ttrans` needs, and rank > 2 transposes as
a loop (unrolled) of 2-D transposes on the flattened tile.

Size-1 axes do not move bytes, so a transpose is judged by the order it gives the non-unit axes:
- unchanged order: the transpose only renames axes; the flattened tile is the same bytes (at most a
  tile.reshape when the last dim changes);
- the last two non-unit axes [.., M, N] swapped: the tile viewed as [pages * M, N] is transposed page by
  page (slice, 4-argument transpose with one shared scratch, assemble into [pages * N, M]);
- anything else moves whole rows between pages; that is not a loop of 2-D transposes: UnsupportedError.

    before:  y: Tile[[2, 16, 32]] = pl.tile.transpose(x3, 1, 2)        # x3 is [2, 32, 16]
    after:   tmp = pl.tile.create([32, 16], ...);  p0 = pl.tile.slice(x2, [32, 16], [0, 0])
             p0_t = pl.tile.transpose(p0, 0, 1, tmp);  y = pl.tile.assemble(acc, p0_t, [0, 0]) ...
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Var, as_int
from pypto.ir.ops.flat_window import flat_shape
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt


class _Emitter:
    """Binds fresh Vars to op calls, in order."""

    def __init__(self, span):
        self.span, self.stmts = span, []

    def bind(self, name: str, value) -> Var:
        v = Var(name, value.type, self.span)
        self.stmts.append(AssignStmt(v, value, self.span))
        return v

    def op(self, name: str, args: list, kwargs=None):
        return create_op_call(name, args, kwargs or {}, self.span)


def scratch_for(x, span) -> tuple:
    """(statement, Var) of the scratch tile a 2-D transpose of `x` needs (its shape, dtype, space)."""
    t = x.type
    value = create_op_call("tile.create", [list(t.shape)],
                           {"dtype": t.dtype, "target_memory": t.memory_space or MemorySpace.Vec}, span)
    tmp = Var("transpose_tmp", value.type, span)
    return AssignStmt(tmp, value, span), tmp


def nd_transpose(call, x, orig) -> tuple:
    """Statements computing the flattened transpose of the rank > 2 tile `orig` (flattened operand `x`),
    and the final value expression (None when the result is `x` itself)."""
    span, rank = call.span, orig.rank
    dims = [as_int(d) for d in orig.shape]
    p, q = sorted(int(as_int(a)) % rank for a in call.args[1:3])
    perm = list(range(rank))
    perm[p], perm[q] = perm[q], perm[p]
    kept = [i for i in range(rank) if dims[i] != 1]
    order = [a for a in perm if dims[a] != 1]
    out_flat = flat_shape([orig.shape[a] for a in perm], "tile.transpose result", span)
    e = _Emitter(span)
    if order == kept:                                   # only unit axes move: same bytes
        if list(as_int(d) for d in x.type.shape) == out_flat:
            return [], None
        return [], e.op("tile.reshape", [x, out_flat])
    if len(kept) < 2 or order != kept[:-2] + [kept[-1], kept[-2]]:
        raise UnsupportedError(f"FlattenTileNdTo2D: tile.transpose of a rank {rank} tile over axes {[p, q]} is not "
                               "supported; only transposes that swap the last two non-unit axes (a loop of 2-D "
                               "transposes) or move size-1 axes are", span,
                               hint="move the axes to swap to the end with pl.reshape first")
    m, n = dims[kept[-2]], dims[kept[-1]]
    pages = out_flat[0] * out_flat[1] // (m * n)
    if list(as_int(d) for d in x.type.shape) != [pages * m, n]:
        x = e.bind(f"{getattr(x, 'name_hint', 'tile')}_pages", e.op("tile.reshape", [x, [pages * m, n]]))
    space = x.type.memory_space or MemorySpace.Vec
    tmp = e.bind("transpose_tmp", e.op("tile.create", [[m, n]], {"dtype": orig.dtype, "target_memory": space}))
    if pages == 1:
        result = e.op("tile.transpose", [x, 0, 1, tmp])
    else:
        acc = e.bind("transposed", e.op("tile.create", [[pages * n, m]],
                                        {"dtype": orig.dtype, "target_memory": space}))
        result = None
        for b in range(pages):
            if result is not None:
                acc = e.bind("transposed", result)
            page = e.bind(f"page{b}", e.op("tile.slice", [x, [m, n], [b * m, 0]]))
            page_t = e.bind(f"page{b}_t", e.op("tile.transpose", [page, 0, 1, tmp]))
            result = e.op("tile.assemble", [acc, page_t, [b * n, 0]])
    if [pages * n, m] != out_flat:
        result = e.op("tile.reshape", [e.bind("transposed", result), out_flat])
    return e.stmts, result
