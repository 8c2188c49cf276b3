"""A param the converted kernel writes is not In any more (seed 003): Out when only written, InOut when
also read; the orchestrator param that feeds it follows. A computed source of pld.tensor.put is a
clear error at the put."""

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import ValueCheckError
from pypto.ir.enums import ParamDirection
from pypto.pypto_core import passes


def _convert(program):
    return passes.convert_tensor_to_tile_ops()(passes.convert_to_ssa()(program))


def test_a_set_notify_target_becomes_out_and_an_atomic_add_one_inout():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def setter(self, sig: pld.DistributedTensor[[2, 1], pl.INT32], peer: pl.Scalar[pl.INT32]):
            pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)

        @pl.function(type=pl.FunctionType.InCore)
        def adder(self, sig: pld.DistributedTensor[[2, 1], pl.INT32], peer: pl.Scalar[pl.INT32]):
            pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def setter(self, sig: pl.Out[pld.DistributedTensor[[2, 1], pl.INT32]], peer: pl.Scalar[pl.INT32]):
            pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)

        @pl.function(type=pl.FunctionType.InCore)
        def adder(self, sig: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]], peer: pl.Scalar[pl.INT32]):
            pld.system.notify(target=sig, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)

    ir.assert_structural_equal(_convert(Before), passes.convert_to_ssa()(Expected))


def test_collective_target_and_signal_become_inout():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, data: pld.DistributedTensor[[1, 64], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32],
              ) -> pld.DistributedTensor[[1, 64], pl.FP32]:
            data = pld.tensor.allreduce(data, sig)
            return data

    k = _convert(Before).get_function("k")
    assert list(k.param_directions) == [ParamDirection.InOut, ParamDirection.InOut]


def test_assemble_loop_target_is_inout_and_the_orchestrator_param_follows():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
            buf: pl.Tensor[[1, 64], pl.FP32] = x
            for i, (acc,) in pl.range(2, init_values=(buf,)):
                off: pl.Scalar[pl.INDEX] = i * 32
                piece: pl.Tensor[[1, 32], pl.FP32] = pl.slice(buf, [1, 32], [0, off])
                acc2: pl.Tensor[[1, 64], pl.FP32] = pl.assemble(acc, piece, [0, off])
                res = pl.yield_(acc2)
            return res

        @pl.function
        def main(self, x: pl.Tensor[[1, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:
            y: pl.Tensor[[1, 64], pl.FP32] = self.k(x)
            return y

    after = _convert(Before)
    assert list(after.get_function("k").param_directions) == [ParamDirection.InOut]
    assert list(after.get_function("main").param_directions) == [ParamDirection.InOut]


def test_put_of_a_computed_value_names_the_put():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 64], pl.FP16], dst: pld.DistributedTensor[[16, 64], pl.FP16],
              peer: pl.Scalar[pl.INT32]):
            doubled = pl.tensor.add(x, x)
            pld.tensor.put(dst, peer=peer, src=doubled)

    with pytest.raises(ValueCheckError, match=r"pld\.tensor\.put src must be a GM tensor") as err:
        _convert(Before)
    assert err.value.span is not None and "remote_store" in err.value.hint
