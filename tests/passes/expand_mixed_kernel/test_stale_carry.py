"""A loop carry one core reads but only the other core updates (issue 16): the split used to repair
the reading side's yield to the carry itself, so the cube kept the initial value and silently
skipped its work. It is an UnsupportedError at the loop naming the carry, its update and the kernel;
a carry the side does not read is still repaired and dropped."""

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.stmt import ForStmt
from pypto.ir.visitor import collect
from pypto.passes import expand_mixed_kernel
from pypto.passes.context import PassContext


@pl.program
class CubeReadsAVectorCarry:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16], [16, 16],
                                                                 target_memory=pl.Mem.Vec)
        for i, (s, o) in pl.range(2, init_values=(0.0, out)):
            if s > 0.5:                                      # the cube side reads the carry s
                b_mat: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [16, 16], [16, 16],
                                                                             target_memory=pl.Mem.Mat)
                b_l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.tile.move(b_mat, target_memory=pl.Mem.Left)
                b_r: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
                z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(b_l, b_r)
                o2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(z, [0, 0], o)
                o3 = pl.yield_(o2)
            else:
                o3 = pl.yield_(o)
            s2: pl.Scalar[pl.FP32] = pl.tile.read(x, [0, 0])    # ... but only the vector side updates it
            s3, o4 = pl.yield_(s2, o3)
        return o4


@pl.program
class OnlyTheVectorReadsIt:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
               sums: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16], [16, 16],
                                                                 target_memory=pl.Mem.Vec)
        for i, (acc, o) in pl.range(2, init_values=(x, out)):
            b_mat: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [16, 16], [16, 16],
                                                                         target_memory=pl.Mem.Mat)
            b_l: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.tile.move(b_mat, target_memory=pl.Mem.Left)
            b_r: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
            z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(b_l, b_r)
            o2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(z, [0, 0], o)
            acc2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, x)     # vector-only carry
            acc3, o3 = pl.yield_(acc2, o2)
        sums2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(acc3, [0, 0], sums)
        return o3


def _expand(program):
    with PassContext([], platform="a2a3"):
        return expand_mixed_kernel()(program)


def test_a_carry_the_cube_reads_but_only_the_vector_updates_is_an_error_at_its_loop():
    with pytest.raises(UnsupportedError) as err:
        _expand(CubeReadsAVectorCarry)
    text = str(err.value)
    assert "kernel kernel: the cube side reads the loop carry 's'" in text
    assert "its update (s2) is computed only by the other core" in text
    loop = next(iter(collect(CubeReadsAVectorCarry.functions["kernel"].body, lambda n: isinstance(n, ForStmt))))
    assert err.value.span.begin_line == loop.span.begin_line


def test_a_carry_only_the_other_side_reads_is_still_repaired_and_dropped():
    after = _expand(OnlyTheVectorReadsIt)
    aic = next(f for f in after.functions.values() if f.func_type is FunctionType.AIC)
    aiv = next(f for f in after.functions.values() if f.func_type is FunctionType.AIV)
    (cube_loop,) = collect(aic.body, lambda n: isinstance(n, ForStmt))
    assert [ia.name_hint for ia in cube_loop.iter_args] == ["o"]           # acc: repaired, then dropped
    (vector_loop,) = collect(aiv.body, lambda n: isinstance(n, ForStmt))
    assert "acc" in [ia.name_hint for ia in vector_loop.iter_args]
