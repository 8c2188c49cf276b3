"""Tensor-level one-sided copies in a kernel: pld.tensor.remote_store pushes the value's on-chip tile
(a GM source is loaded first), a 2-D pld.tensor.put / get becomes a bounded Vec stage plus the tile
transfer (seed 001: pto-isa walks the region over the stage), and the written side's parameter is
promoted to Out. pipeline=True stages through two tiles, the ping-pong pair TPUT alternates between."""

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import TypeCheckError, ValueCheckError
from pypto.pypto_core import passes


def _convert(program):
    return passes.convert_tensor_to_tile_ops()(program)


@pl.program
class PushComputed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP16], dst: pld.DistributedTensor[[16, 64], pl.FP16],
          peer: pl.Scalar[pl.INT32]):
        doubled = pl.tensor.add(x, x)
        pld.tensor.remote_store(doubled, dst, peer, [0, 0], atomic=pld.AtomicType.Add)


def test_remote_store_of_a_computed_value_pushes_its_tile():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 64], pl.FP16], dst: pl.Out[pld.DistributedTensor[[16, 64], pl.FP16]],
              peer: pl.Scalar[pl.INT32]):
            x_tile: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 64], [16, 64])
            doubled: pl.Tile[[16, 64], pl.FP16, pl.Mem.Vec] = pl.tile.add(x_tile, x_tile)
            pld.tile.remote_store(doubled, dst, peer, [0, 0], atomic=pld.AtomicType.Add)

    ir.assert_structural_equal(_convert(PushComputed), Expected)


@pl.program
class PutGet:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, dst: pld.DistributedTensor[[16, 64], pl.FP16], src: pl.Tensor[[16, 64], pl.FP16],
          local: pl.Tensor[[4, 64], pl.FP16], peer: pl.Scalar[pl.INT32]):
        pld.tensor.put(dst, peer, src, chunk_rows=4, chunk_cols=32)
        pld.tensor.get(local, peer, dst, [1, 0], [3, 0], [1, 64])


def test_put_and_get_stage_through_a_bounded_vec_tile():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, dst: pl.Out[pld.DistributedTensor[[16, 64], pl.FP16]], src: pl.Tensor[[16, 64], pl.FP16],
              local: pl.Out[pl.Tensor[[4, 64], pl.FP16]], peer: pl.Scalar[pl.INT32]):
            put_stage: pl.Tile[[4, 32], pl.FP16, pl.Mem.Vec] = pl.tile.create([4, 32], dtype=pl.FP16,
                                                                              target_memory=pl.Mem.Vec)
            pld.tile.put(dst, peer, src, put_stage)
            get_stage: pl.Tile[[1, 64], pl.FP16, pl.Mem.Vec] = pl.tile.create([1, 64], dtype=pl.FP16,
                                                                              target_memory=pl.Mem.Vec)
            pld.tile.get(local, peer, dst, get_stage, [1, 0], [3, 0], [1, 64])

    ir.assert_structural_equal(_convert(PutGet), Expected)


@pl.program
class PutPipelined:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, dst: pl.InOut[pld.DistributedTensor[[16, 64], pl.FP16]], src: pl.Tensor[[16, 64], pl.FP16],
          peer: pl.Scalar[pl.INT32]):
        pld.tensor.put(dst, peer, src, chunk_rows=4, chunk_cols=32, pipeline=True)


def test_a_pipelined_put_stages_through_a_ping_pong_pair():
    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, dst: pl.InOut[pld.DistributedTensor[[16, 64], pl.FP16]], src: pl.Tensor[[16, 64], pl.FP16],
              peer: pl.Scalar[pl.INT32]):
            ping: pl.Tile[[4, 32], pl.FP16, pl.Mem.Vec] = pl.tile.create([4, 32], dtype=pl.FP16, target_memory=pl.Mem.Vec)
            pong: pl.Tile[[4, 32], pl.FP16, pl.Mem.Vec] = pl.tile.create([4, 32], dtype=pl.FP16, target_memory=pl.Mem.Vec)
            pld.tile.put(dst, peer, src, ping, pong)

    ir.assert_structural_equal(_convert(PutPipelined), Expected)


def test_the_ping_pong_stages_must_match():
    with pytest.raises(TypeCheckError, match="ping-pong staging tiles need one shape"):
        @pl.program
        class Mismatched:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, dst: pld.DistributedTensor[[16, 64], pl.FP16], src: pl.Tensor[[16, 64], pl.FP16],
                  peer: pl.Scalar[pl.INT32]):
                ping = pl.tile.create([4, 32], dtype=pl.FP16, target_memory=pl.Mem.Vec)
                pong = pl.tile.create([8, 32], dtype=pl.FP16, target_memory=pl.Mem.Vec)
                pld.tile.put(dst, peer, src, ping, pong)


@pl.program
class PutComputed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, dst: pld.DistributedTensor[[16, 64], pl.FP16], x: pl.Tensor[[16, 64], pl.FP16],
          peer: pl.Scalar[pl.INT32]):
        y = pl.tensor.add(x, x)
        pld.tensor.put(dst, peer, y)


def test_put_of_a_computed_value_names_remote_store():
    with pytest.raises(ValueCheckError, match="pld.tensor.put src must be a GM tensor.*pld.tile.remote_store"):
        _convert(PutComputed)
