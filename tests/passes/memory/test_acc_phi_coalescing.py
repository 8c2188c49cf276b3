"""MemoryReuse / InitMemRef phi coalescing for the cube: an Acc tile carried through a K loop, and
through an if inside it, keeps one L0C buffer — no `tile.move` copy of the accumulator, every Acc
value at the same address — and the result still matches numpy."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program


@pl.program
class AccThroughLoopAndIf:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 256], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.create([64, 64], dtype=pl.FP32,
                                                                     target_memory=pl.Mem.Acc)
        for ko in pl.range(0, 4):
            a_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, ko * 64], [64, 64],
                                                                    target_memory=pl.Mem.Mat)
            a_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
            b_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.load(b, [ko * 64, 0], [64, 64],
                                                                    target_memory=pl.Mem.Mat)
            b_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
            if ko == 0:
                acc = pl.tile.matmul(a_left, b_right)
            else:
                acc = pl.tile.matmul_acc(acc, a_left, b_right)
        c2: pl.Tensor[[64, 64], pl.FP32] = pl.store(acc, [0, 0], c)
        return c2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 256], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c2 = self.k(a, b, c)
        return c2


def n_space(call):
    t = call.type
    return t.memory_space if isinstance(t, ir.TileType) else None


def _acc_vars(func) -> list:
    return [v for v in ir.verifier.defined_vars(func.body)
            if isinstance(v.type, ir.TileType) and v.type.memory_space is MemorySpace.Acc]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_acc_carried_through_loop_and_if_keeps_one_buffer_and_matches_numpy(platform):
    kernel = compile_program(AccThroughLoopAndIf, platform=platform).lowered["k"]
    accs = _acc_vars(kernel)
    assert len(accs) >= 4                         # init, iter arg, both branch values, if / loop results
    assert len({v.type.memref.base for v in accs}) == 1
    moves = [c for c in collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                                and n.op.name == "tile.move")
             if n_space(c) is MemorySpace.Acc]
    assert moves == []
    allocs = [c for c in collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                                 and n.op.name == "tile.alloc")
              if c.kwargs["memory_space"] is MemorySpace.Acc]
    assert len(allocs) == 1 and allocs[0].kwargs["size"] == 64 * 64 * 4

    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 256), dtype=np.float32)
    b = rng.standard_normal((256, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    run(AccThroughLoopAndIf, a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


@pl.program
class AccInitWithADeadAlias:
    """The split-K shape of the reference's paged-attention PV kernel: the first block's matmul is the
    K loop's init, and `out = acc` (a name the loop re-binds) is never read."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 256], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a0 = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b0 = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.matmul(a0, b0)
        out = acc
        for ko, (acc_iter,) in pl.range(1, 4, init_values=(acc,)):
            ai = pl.move(pl.load(a, [0, ko * 64], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            bi = pl.move(pl.load(b, [ko * 64, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            nxt = pl.matmul_acc(acc_iter, ai, bi)
            (out,) = pl.yield_(nxt)
        c2 = pl.store(out, [0, 0], c)
        return c2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 256], pl.FP32], b: pl.Tensor[[256, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c2 = self.k(a, b, c)
        return c2


def test_an_acc_init_whose_other_name_is_never_read_continues_in_place():
    kernel = compile_program(AccInitWithADeadAlias, platform="a2a3sim").lowered["k"]
    assert len({v.type.memref.base for v in _acc_vars(kernel)}) == 1      # no Acc → Acc copy was needed
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 256), dtype=np.float32)
    b = rng.standard_normal((256, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    run(AccInitWithADeadAlias, a, b, c, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
