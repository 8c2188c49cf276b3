"""MaterializeSemanticAliases: an in-place result and the input it overwrites, and the parts of a
loop carry, end up on one base even when the IR handed to it (here hand-written) split them."""

import pypto.language as pl
from pypto import ir
from pypto.ir.visitor import collect
from pypto.pypto_core import passes

SPLIT = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        mem_mat_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Mat, size=1024, addr=-1)
        mem_left_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Left, size=1024, addr=-1)
        mem_right_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Right, size=1024, addr=-1)
        mem_acc_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Acc, size=1024, addr=-1)
        mem_acc_1: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Acc, size=1024, addr=-1)
        mem_acc_2: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Acc, size=1024, addr=-1)
        m: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_mat_0, 0, 1024), pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        l: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_left_0, 0, 1024), pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
        r: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_right_0, 0, 1024), pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
        c: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_acc_0, 0, 1024), pl.Mem.Acc] = pl.tile.matmul(l, r)
        for i, (acc,) in pl.range(2, init_values=(c,)):
            acc2: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_acc_1, 0, 1024), pl.Mem.Acc] = pl.tile.matmul_acc(acc, l, r)
            acc3 = pl.yield_(acc2)
        d: pl.Tile[[16, 16], pl.FP32, pl.MemRef(mem_acc_2, 0, 1024), pl.Mem.Acc] = pl.tile.matmul_acc(acc3, l, r)
        out2: pl.Tensor[[16, 16], pl.FP32] = pl.store(d, [0, 0], out)
"""


def test_in_place_results_and_loop_carries_share_one_base():
    after = passes.materialize_semantic_aliases()(pl.parse(SPLIT))
    kernel = after["k"]
    bases = {v.name_hint: v.type.memref.base.name_hint for v in ir.verifier.defined_vars(kernel.body)
             if isinstance(v.type, ir.TileType) and v.type.memref is not None}
    assert bases["c"] == bases["acc"] == bases["acc2"] == bases["acc3"] == bases["d"] == "mem_acc_0"
    allocs = [s.var.name_hint for s in collect(kernel.body, lambda n: isinstance(n, ir.AssignStmt)
                                               and isinstance(n.var.type, ir.PtrType))]
    assert allocs == ["mem_mat_0", "mem_left_0", "mem_right_0", "mem_acc_0"]


def test_ir_that_already_aliases_is_returned_unchanged():
    once = passes.materialize_semantic_aliases()(pl.parse(SPLIT))
    assert passes.materialize_semantic_aliases()(once) is once
