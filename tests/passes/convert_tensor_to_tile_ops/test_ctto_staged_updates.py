"""A GM tensor initialised in full (tensor.full + assemble at offset 0) and then patched by scalar writes
is staged in UB: the writes go into the fill's tile (tile.write) and the tile is stored once, after them,
so every GM write of the tensor uses MTE3. A read of the tensor between the two keeps the kernel as
written (and so rejected for mixing store paths). Loop carries that swap tensors between iterations
are followed when looking for mixed store paths."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ValueCheckError
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run
from tests.helpers import op_names


@pl.program
class TwoMarkedTables:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, flags: pl.Tensor[[1, 16], pl.INT32], ids: pl.Tensor[[16], pl.INT32],
          src: pl.Tensor[[16], pl.INT32], n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        zero = pl.full([1, 16], dtype=pl.INT32, value=0)
        flags[0:1, 0:16] = zero
        none = pl.full([16], dtype=pl.INT32, value=-1)
        ids[0:16] = none
        for j in pl.range(16):
            if j < n:
                v = pl.tensor.read(src, [j])
                pl.tensor.write(flags, [0, j], v)
                pl.tensor.write(ids, [j], pl.cast(j, pl.INT32))
        return n


def test_scalar_updates_after_a_full_init_become_tile_writes_and_one_store_each():
    ops = op_names(convert_tensor_to_tile_ops()(TwoMarkedTables)["k"])
    assert ops.count("tile.full") == 2 and ops.count("tile.write") == 2 and ops.count("tile.store") == 2
    assert "tensor.write" not in ops
    # each store comes after the loop that patches its tile
    assert ops.index("tile.store") > max(i for i, o in enumerate(ops) if o == "tile.write")


@pl.program
class ReadBetween:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, t: pl.Tensor[[16], pl.INT32]) -> pl.Scalar[pl.INT32]:
        fill = pl.full([16], dtype=pl.INT32, value=3)
        t[0:16] = fill
        first = pl.tensor.read(t, [0])
        pl.tensor.write(t, [5], first)
        return first


def test_a_read_of_the_initialised_tensor_keeps_it_unstaged():
    with pytest.raises(ValueCheckError, match="mixes MTE3 and scalar stores"):
        convert_tensor_to_tile_ops()(ReadBetween)


@pl.program
class PartialInit:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, t: pl.Tensor[[32], pl.INT32], v: pl.Scalar[pl.INT32]) -> pl.Tensor[[32], pl.INT32]:
        fill = pl.full([16], dtype=pl.INT32, value=3)
        t[0:16] = fill
        pl.tensor.write(t, [20], v)
        return t


def test_an_init_of_part_of_the_tensor_is_not_staged():
    with pytest.raises(ValueCheckError, match="mixes MTE3 and scalar stores"):
        convert_tensor_to_tile_ops()(PartialInit)


@pl.program
class Marks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[16], pl.INT32], n: pl.Scalar[pl.INDEX],
             marks: pl.Out[pl.Tensor[[1, 16], pl.INT32]]) -> pl.Tensor[[1, 16], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            init = pl.full([1, 16], dtype=pl.INT32, value=7)
            marks[0:1, 0:16] = init
            for j in pl.range(16):
                if j < n:
                    v = pl.tensor.read(src, [j])
                    pl.tensor.write(marks, [0, j], v + 1)
        return marks


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_staged_updates_compute_the_written_tensor(platform):
    src = np.arange(16, dtype=np.int32) * 3 - 4
    got = np.zeros((1, 16), np.int32)
    run(Marks, config=RunConfig(platform=platform))(src, 6, got)
    want = np.full((1, 16), 7, np.int32)
    want[0, :6] = src[:6] + 1
    np.testing.assert_array_equal(got, want)


@pl.program
class SwapInFor:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32], pl.INT32], b: pl.Tensor[[32], pl.INT32],
          v: pl.Scalar[pl.INT32]) -> pl.Tensor[[32], pl.INT32]:
        t: pl.Tile[[32], pl.INT32, pl.Mem.Vec] = pl.tile.load(a, [0], [32])
        for i, (cur,) in pl.range(2, init_values=(a,)):
            s: pl.Tensor[[32], pl.INT32] = pl.tile.store(t, [0], cur)
            last = pl.yield_(b)           # the second iteration stores into b
        w: pl.Tensor[[32], pl.INT32] = pl.tensor.write(b, [0], v)
        return last


@pl.program
class SwapInWhile:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32], pl.INT32], b: pl.Tensor[[32], pl.INT32],
          v: pl.Scalar[pl.INT32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32], pl.INT32]:
        t: pl.Tile[[32], pl.INT32, pl.Mem.Vec] = pl.tile.load(a, [0], [32])
        for (cur, c) in pl.while_(init_values=(a, 0)):
            pl.cond(c < n)
            s: pl.Tensor[[32], pl.INT32] = pl.tile.store(t, [0], cur)
            c2: pl.Scalar[pl.INDEX] = c + 1
            last, c_rv = pl.yield_(b, c2)
        w: pl.Tensor[[32], pl.INT32] = pl.tensor.write(b, [0], v)
        return last


@pytest.mark.parametrize("program", [SwapInFor, SwapInWhile], ids=["for", "while"])
def test_a_store_through_a_carry_that_later_holds_another_tensor_counts_for_it(program):
    with pytest.raises(ValueCheckError, match="GM tensor 'b' mixes MTE3 and scalar stores"):
        convert_tensor_to_tile_ops()(program)
