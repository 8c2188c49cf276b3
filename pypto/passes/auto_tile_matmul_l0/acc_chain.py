"""M / N output tiling of a straight-line accumulation chain (part of AutoTileMatmulL0, pass doc 15):
`t = matmul(a0, b0); t1 = matmul_acc(t, a1, b1); ...; store(tn, ..)` whose [M, N] accumulator
overflows L0C. Tiling only the first matmul cannot help (the caller-owned matmul_acc would still need
the whole [M, N] Acc), so each [m, n] output block runs the whole chain: the block's K loop of the
first matmul starts a fresh accumulator, every later link's K loop carries that block on (no
init_cond: it keeps accumulating), and the block is stored to its window. A `matmul_acc` whose
accumulator comes from anywhere else (e.g. loaded from GM) is left as written.

    before:  t = matmul(l0, r0); <loads / moves of a1, b1>; t1 = matmul_acc(t, l1, r1); c1 = store(t1, [0, 0], c)
    after:   <loads / moves of a1, b1>; for mi, (c_mi,) in pl.range(0, M, m, ...): (and ni)
                 <K loop of a0 / b0 on [mi, ni]>; <K loop of a1 / b1 carrying it>; store(acc_done, [mi, ni], c_mi)
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.stmt import AssignStmt
from pypto.ir.types import static_dims
from pypto.passes.auto_tile_matmul_l0.blocking import direct_store
from pypto.passes.auto_tile_matmul_l0.ir_queries import op_name, readers
from pypto.passes.auto_tile_matmul_l0.tile_choice import choose_l0_tile


def _next_link(tiler, var, after: list):
    """(index in `after`, statement, Mat lhs, Mat rhs) of the `matmul_acc(var, l, r)` that is `var`'s only
    reader, with Mat-resident operands; else None."""
    if readers(tiler.func.body, var) != 1:
        return None
    for j, x in enumerate(after):
        if not isinstance(x, AssignStmt) or var not in getattr(x.value, "args", ()):
            continue
        if op_name(x.value) != "tile.matmul_acc" or len(x.value.args) != 3 or x.value.args[0] is not var:
            return None
        a = tiler.mat_source(x.value.args[1], MemorySpace.Left)
        b = tiler.mat_source(x.value.args[2], MemorySpace.Right)
        if (a is None or b is None or x.var.type.dtype is not var.type.dtype
                or static_dims(x.var.type.shape) != static_dims(var.type.shape)):
            return None
        return j, x, a, b
    return None


def acc_chain(tiler, s: AssignStmt, after: list, a, b, tile: tuple):
    """(statements replacing `s`, consumed statement ids) when the `tile.matmul` `s` (Mat operands a, b,
    chosen L0 tile (m, n, k)) starts a chain of matmul_accs ending in one store; else None."""
    links, var, last = [], s.var, -1
    while True:
        found = _next_link(tiler, var, after)
        if found is None:
            break
        j, x, la, lb = found
        links.append((x, la, lb))
        var, last = x.var, j
    if not links or tiler.stream is not None:
        return None
    store = tiler.single_store(var, after[last + 1:])
    if store is None:
        return None
    link_ids = {id(x) for x, _a, _b in links}
    between = [x for x in after[:last] if id(x) not in link_ids]
    if any(not isinstance(x, AssignStmt) or op_name(x.value) in ("tile.matmul", "tile.matmul_acc")
           for x in between):
        return None                              # only plain assignments may move above the chain
    (M, N), (m, n, k) = static_dims(s.var.type.shape), tile
    result = s.var.type
    steps = [(a, b, static_dims(a.type.shape)[1], k)]
    for _x, la, lb in links:
        K_i = static_dims(la.type.shape)[1]
        choice = choose_l0_tile(m, n, K_i, la.type.dtype.get_byte(), lb.type.dtype.get_byte(),
                                result.dtype.get_byte(), tiler.platform)
        if choice is None or choice[:2] != (m, n):
            return None
        steps.append((la, lb, K_i, choice[2]))

    def block(mi, ni, bm: int, bn: int, span):
        out, acc = [], None
        for la, lb, K_i, k_i in steps:
            stmts, acc = tiler.k_loop(la, lb, mi, ni, bm, bn, K_i, k_i, result, acc, span)
            out += stmts
        return out, acc

    grid = tiler.output_grid(a, b, (M, N, steps[0][2]), tile, result, direct_store(store), s.span, block)
    return between + grid, link_ids | {id(x) for x in between} | {id(store)}
