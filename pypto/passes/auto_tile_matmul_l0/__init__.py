"""AutoTileMatmulL0: tile Mat-resident matmuls so their operands fit L0A / L0B and the result L0C.

Requires: SSAForm, IncoreTileOps / Produces: — / Invalidates: —
Reference: pass doc 15 (compiler-and-runtime.md §2, dump 16). Modules: tile_choice.py (the (m, n, k)
choice from the platform's L0 capacities: multiples of 16, a traffic cost model), k_loop.py (the K
loop of Mat → Left / Right `tile.extract`s accumulating in one Acc buffer, `init_cond = ko == 0` for
a fresh accumulator), blocking.py (M / N output tiling when the [M, N] result overflows L0C and has
one consumer: a `tile.store`, each block stored to its window, or an Acc → Mat writeback, each block
assembled into one [M, N] Mat scratch), acc_chain.py (M / N tiling of a straight-line chain
`t = matmul; t1 = matmul_acc(t, ..); store`: each block runs every link's K loop), split_k.py
(M / N tiling of a split-K chain `matmul; for k: matmul_acc` ending in one store: each block re-runs
the chain on narrowed panels),
fixpipe_cast_fold.py (a rint FP32 → FP16 / BF16 `tile.cast` feeding only the writeback becomes part
of it), l1_streaming.py (Mat operands overflowing L1 that are plain GM-window loads are loaded block
by block per K step), operands.py (operand / consumer analysis; a Vec left operand is staged in Mat
where the platform has a Vec → Mat path, a5), tiler.py (the statement rewriter). Tiles need not
divide the problem: partial M / N blocks and the last K block are peeled.
Not implemented (the matmul is left as it is, so AllocateMemoryAddr reports the overflow):
M / N tiling of a `matmul_acc` whose [M, N] accumulator is not an earlier matmul of its chain (e.g. a
GM-loaded accumulator: no GM / Vec / Mat path leads into Acc) or of results read on-chip other than
through a Mat writeback, L0C double buffering, `pl.pipeline` stage marking.

    before:  l = pl.tile.move(a_mat, target_memory=Left); r = ...; c = pl.tile.matmul(l, r)
    after:   for ko, (acc,) in pl.range(0, K, k, init_values=(pl.tile.create([M, N], ..., Acc),)):
                 l = pl.tile.extract(a_mat, 0, ko, [M, k], target_memory=Left); r = ...
                 acc2 = pl.tile.matmul_acc(acc, l, r, ko == 0); pl.yield_(acc2)
"""

from __future__ import annotations

from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt
from pypto.ir.walks import statements
from pypto.passes.analysis import as_seq, body_list, used_vars
from pypto.passes.auto_tile_matmul_l0.fixpipe_cast_fold import fold_fixpipe_casts, foldable_cast
from pypto.passes.auto_tile_matmul_l0.ir_queries import all_assigns, op_name
from pypto.passes.auto_tile_matmul_l0.tile_choice import choose_l0_tile
from pypto.passes.auto_tile_matmul_l0.tiler import MatmulTiler
from pypto.passes.memory.loop_carry_buffers import substitute_with_inits
from pypto.passes.base import function_pass
from pypto.passes.properties import IRProperty, PassProperties

__all__ = ["auto_tile_matmul_l0", "choose_l0_tile", "MatmulTiler"]


def drop_dead_moves(func: Function) -> Function:
    """Remove the Mat → Left / Right moves the tiling left without a reader (and the whole-operand
    Mat loads an L1-streamed matmul replaced)."""
    while True:
        read = set(used_vars(func.body))
        dead = {s.var for s in all_assigns(func.body) if s.var not in read and (
                (op_name(s.value) == "tile.move" and s.var.type.memory_space in (MemorySpace.Left, MemorySpace.Right))
                or (op_name(s.value) in ("tile.load", "tile.transpose_view")
                    and s.var.type.memory_space is MemorySpace.Mat))}
        if not dead:
            return func

        def prune(stmts):
            kept = []
            for s in stmts:
                if isinstance(s, AssignStmt) and s.var in dead:
                    continue
                if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
                    s = s.replace(body=as_seq(prune(body_list(s.body)), s.body.span))
                elif isinstance(s, IfStmt):
                    s = s.replace(then_body=as_seq(prune(body_list(s.then_body)), s.then_body.span),
                                  else_body=as_seq(prune(body_list(s.else_body)), s.else_body.span)
                                  if s.else_body is not None else None)
                kept.append(s)
            return kept

        func = func.replace(body=as_seq(prune(body_list(func.body)), func.body.span))


def _run(func: Function, program: Program) -> Function:
    if func.func_type in (FunctionType.Orchestration, FunctionType.Opaque, FunctionType.Inline):
        return func
    if not any(_rewritable(s) for s in statements(func.body)):
        return func                         # no matmul to tile, no cast to fold (a vector kernel)
    func = fold_fixpipe_casts(func)
    for _round in range(3):        # a split-K chain's narrowed blocks are K-tiled in the next round
        tiler = MatmulTiler(func)
        body = as_seq(tiler.stmts(body_list(func.body)), func.body.span)
        if not tiler.changed:
            break
        if tiler.replace:
            body = substitute_with_inits(body, tiler.replace)   # a result may init a split-K loop
        func = drop_dead_moves(func.replace(body=body))
    return func


def _rewritable(s) -> bool:
    """Whether statement s is one this pass may rewrite: a matmul it tiles or an Acc cast it folds."""
    return isinstance(s, AssignStmt) and (op_name(s.value) in ("tile.matmul", "tile.matmul_acc")
                                          or foldable_cast(s.value) is not None)


def auto_tile_matmul_l0():
    return function_pass("AutoTileMatmulL0", _run,
                         PassProperties(required={IRProperty.SSAForm, IRProperty.IncoreTileOps}))
