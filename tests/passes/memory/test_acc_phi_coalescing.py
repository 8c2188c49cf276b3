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
