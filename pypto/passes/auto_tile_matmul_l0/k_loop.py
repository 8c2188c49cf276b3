"""The K loop of AutoTileMatmulL0: one [m, n] Acc tile accumulated over K in k-wide steps, each
extracting the [m, k] / [k, n] slabs from Mat into Left / Right (`matmul_acc` with `ko == 0` as
init_cond for a fresh accumulator), with the last K block peeled when k does not divide K.

    for ko, (acc,) in pl.range(0, K, k, init_values=(acc_init,)):
        a_l0 = extract(a_mat, mi, ko, [m, k], Left); b_l0 = ...; acc_next = matmul_acc(acc, a_l0, b_l0, ko == 0)
"""

from __future__ import annotations

from pypto.ir.dtypes import BOOL, INDEX
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, ConstInt, IterArg, Var, const
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, YieldStmt
from pypto.ir.types import TileType
from pypto.passes.analysis import as_seq
from pypto.passes.auto_tile_matmul_l0.ir_queries import index_type
from pypto.passes.auto_tile_matmul_l0.l1_streaming import stream_block


class KLoopEmitter:
    """Mixin of the tiler: needs `self.stream` (the operands' GM windows while L1-streaming, else None)."""

    def k_loop(self, a: Var, b: Var, mi, ni, m: int, n: int, K: int, k: int, result: TileType, init, span):
        """The K loop producing one [m, n] Acc tile, plus a peeled tail block when k does not divide K:
        (statements, the Var holding the finished tile)."""
        out: list = []
        acc_type = TileType([m, n], result.dtype, memory_space=MemorySpace.Acc)
        if init is None:
            create = create_op_call("tile.create", [[m, n]], {"dtype": result.dtype,
                                                              "target_memory": MemorySpace.Acc}, span)
            init = Var("acc_init", create.type, span)
            out.append(AssignStmt(init, create, span))
        full = K // k * k
        ko = Var("ko", index_type(), span)
        carry = IterArg("acc", init.type, init, span)
        # a fresh accumulator (created just above) starts at ko == 0; a caller's one keeps accumulating
        fresh = BinaryExpr("eq", ko, ConstInt(0, INDEX, span), BOOL, span) if out else None
        body, pv = self.k_step(a, b, mi, ni, ko, m, n, k, carry, fresh, span)
        done = Var("acc_done", acc_type if init.type == acc_type else init.type, span)
        out.append(ForStmt(ko, const(0, span=span), const(full, span=span), const(k, span=span), [carry],
                           as_seq(body + [YieldStmt([pv], span)], span), [done], span=span))
        if full < K:
            tail, done = self.k_step(a, b, mi, ni, const(full, span=span), m, n, K - full, done, None, span)
            out += tail
        return out, done

    def k_step(self, a, b, mi, ni, ko, m: int, n: int, k: int, acc, init_cond, span) -> tuple:
        """Extract the [m, k] / [k, n] slabs at ko and accumulate their product into acc (L1-streamed:
        first load those slabs from GM into Mat, then extract them whole)."""
        loads: list = []
        if self.stream is not None:
            wa, wb = self.stream
            a = stream_block(wa, mi, ko, m, k, "a_l1", loads, span)
            b = stream_block(wb, ko, ni, k, n, "b_l1", loads, span)
            zero = const(0, span=span)
            mi, ni, ko_a, ko_b = zero, zero, zero, zero
        else:
            ko_a = ko_b = ko
        left = create_op_call("tile.extract", [a, mi, ko_a, [m, k]], {"target_memory": MemorySpace.Left}, span)
        right = create_op_call("tile.extract", [b, ko_b, ni, [k, n]], {"target_memory": MemorySpace.Right}, span)
        lv, rv = Var("a_l0", left.type, span), Var("b_l0", right.type, span)
        args = [acc, lv, rv] + ([init_cond] if init_cond is not None else [])
        product = create_op_call("tile.matmul_acc", args, {}, span)
        pv = Var("acc_next", product.type, span)
        return loads + [AssignStmt(lv, left, span), AssignStmt(rv, right, span), AssignStmt(pv, product, span)], pv
