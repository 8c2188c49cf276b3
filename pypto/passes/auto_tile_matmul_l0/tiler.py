"""The matmul rewriter of AutoTileMatmulL0: walks one kernel's statements and replaces each Mat-resident
`tile.matmul` / `tile.matmul_acc` whose operands or result overflow L0 by its tiled form — a K loop
when the [M, N] result fits L0C, else an M / N grid of K loops feeding the result's one consumer
(a GM store, an Acc → Mat writeback, or the store ending a split-K chain).

    c = pl.tile.matmul(l, r)  →  staged operand moves + K loop (+ M / N blocks) binding c's replacement
"""

from __future__ import annotations

from pypto.ir.enums import MemorySpace
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, WhileStmt
from pypto.ir.types import static_dims
from pypto.passes.analysis import as_seq, body_list
from pypto.passes.auto_tile_matmul_l0.acc_chain import acc_chain
from pypto.passes.auto_tile_matmul_l0.blocking import OutputBlocking, direct_store
from pypto.passes.auto_tile_matmul_l0.ir_queries import all_assigns, op_name
from pypto.passes.auto_tile_matmul_l0.k_loop import KLoopEmitter
from pypto.passes.auto_tile_matmul_l0.l1_streaming import L1Streaming
from pypto.passes.auto_tile_matmul_l0.operands import OperandFinder
from pypto.passes.auto_tile_matmul_l0.split_k import split_k_chain
from pypto.passes.auto_tile_matmul_l0.tile_choice import choose_l0_tile
from pypto.passes.context import current_platform


class MatmulTiler(OperandFinder, L1Streaming, KLoopEmitter, OutputBlocking):
    """Rewrites the matmuls of one kernel; `defs` maps each Var to its defining value."""

    def __init__(self, func: Function):
        self.func = func
        self.platform = current_platform()
        self.defs: dict = {}
        for s in all_assigns(func.body):
            self.defs[s.var] = s.value
        self.replace: dict = {}         # store result Var → the tiled loop's result
        self.stream = None              # (window of a, window of b) while emitting an L1-streamed matmul
        self.changed = False

    def stmts(self, stmts: list) -> list:
        out: list = []
        skip: set = set()
        for i, s in enumerate(stmts):
            if id(s) in skip:
                continue
            if isinstance(s, AssignStmt) and op_name(s.value) in ("tile.matmul", "tile.matmul_acc"):
                tiled = self.matmul(s, stmts[i + 1:])
                if tiled is not None:
                    new, consumed = tiled
                    out += new
                    skip |= consumed
                    self.changed = True
                    continue
            out.append(self.nested(s))
        return out

    def nested(self, s):
        if isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            return s.replace(body=as_seq(self.stmts(body_list(s.body)), s.body.span))
        if isinstance(s, IfStmt):
            return s.replace(then_body=as_seq(self.stmts(body_list(s.then_body)), s.then_body.span),
                             else_body=as_seq(self.stmts(body_list(s.else_body)), s.else_body.span)
                             if s.else_body is not None else None)
        return s

    def matmul(self, s: AssignStmt, after: list):
        call = s.value
        is_acc = call.op.name == "tile.matmul_acc"
        if is_acc and len(call.args) > 3:
            return None                          # a user init_cond: leave the op as written
        lhs, rhs = call.args[1:3] if is_acc else call.args[:2]
        a, staged = self.mat_source(lhs, MemorySpace.Left), []
        if a is None:
            a, staged = self.vec_left(lhs)
        b = self.mat_source(rhs, MemorySpace.Right)
        if a is None or b is None:
            return None
        (M, K), (_, N) = static_dims(a.type.shape), static_dims(b.type.shape)
        result = s.var.type
        if static_dims(result.shape) != (M, N):
            return None
        choice = choose_l0_tile(M, N, K, a.type.dtype.get_byte(), b.type.dtype.get_byte(), result.dtype.get_byte(),
                                self.platform)
        if choice is None or choice == (M, N, K):
            return None
        m, n, k = choice
        self.stream = self.l1_stream(a, b)
        if (m, n) == (M, N):
            init = call.args[0] if is_acc else None
            stmts, final = self.k_loop(a, b, 0, 0, m, n, K, k, result, init, s.span)
            self.replace[s.var] = final
            return staged + stmts, set()
        if is_acc:
            return None                          # M / N blocks of a caller-owned accumulator: see acc_chain.py
        store = self.single_store(s.var, after)
        if store is not None:
            grid = self.output_grid(a, b, (M, N, K), (m, n, k), result, direct_store(store), s.span)
            return staged + grid, {id(store)}
        found = self.single_mat_writeback(s.var, after, M * N * result.dtype.get_byte())
        if found is None:
            chain = split_k_chain(self, s, after, a, b)
            if chain is None:
                tiled = acc_chain(self, s, after, a, b, (m, n, k))
                return None if tiled is None else (staged + tiled[0], tiled[1])
            store, block, consumed = chain
            grid = self.output_grid(a, b, (M, N, K), (m, n, k), result, direct_store(store), s.span, block)
            return staged + grid, consumed
        placement, consumed = found
        return staged + self.output_grid(a, b, (M, N, K), (m, n, k), result, placement, s.span), consumed
