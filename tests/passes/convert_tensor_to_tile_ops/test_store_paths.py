"""ConvertTensorToTileOps rejects a kernel that writes one GM tensor both by DMA (tile.store /
tensor.assemble, MTE3) and by scalar stores (tensor.write / tile.write), naming the tensor, both
ops and their lines."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ValueCheckError
from pypto.ir.visitor import collect
from pypto.pypto_core import passes


def _line_of(func, op_name: str) -> int:
    call = collect(func.body, lambda n: isinstance(n, ir.Call) and getattr(n.op, "name", "") == op_name)[0]
    return call.span.line


def _expect_mixed(prog, tensor: str, dma_op: str, scalar_op: str):
    with pytest.raises(ValueCheckError) as info:
        passes.convert_tensor_to_tile_ops()(prog)
    msg = str(info.value)
    func = prog["k"]
    assert f"GM tensor '{tensor}'" in msg and "mixes MTE3 and scalar stores" in msg
    assert f"{dma_op} (line {_line_of(func, dma_op)})" in msg
    assert f"{scalar_op} (line {_line_of(func, scalar_op)})" in msg
    assert info.value.hint and info.value.span.line == _line_of(func, scalar_op)


def test_assemble_then_scalar_write_to_one_tensor_is_rejected():
    @pl.program
    class Mixed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y: pl.Tensor[[16, 16], pl.FP32] = pl.add(x, x)
            o2: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.assemble(out, y, [0, 0])
            o3: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.write(o2, [0, 0], 1.0)
            return o3

    _expect_mixed(Mixed, "out", "tensor.assemble", "tensor.write")


def test_a_tile_store_in_a_loop_and_a_write_through_a_slice_are_traced_to_one_tensor():
    @pl.program
    class Mixed:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.InOut[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            for i, (acc,) in pl.range(0, 2, 1, init_values=(out,)):
                t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16])
                a2: pl.Tensor[[32, 16], pl.FP32] = pl.tile.store(t, [i * 16, 0], acc)
                acc_rv = pl.yield_(a2)
            top: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.slice(acc_rv, [16, 16], [0, 0])
            w: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.write(top, [3, 3], 0.0)
            return acc_rv

    _expect_mixed(Mixed, "out", "tile.store", "tensor.write")


def test_scalar_writes_to_one_tensor_and_dma_to_another_are_fine():
    @pl.program
    class Separate:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], flags: pl.InOut[pl.Tensor[[16, 16], pl.INT32]],
              out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            y: pl.Tensor[[16, 16], pl.FP32] = pl.add(x, x)
            o2: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.assemble(out, y, [0, 0])
            f2: pl.Tensor[[16, 16], pl.INT32] = pl.tensor.write(flags, [0, 0], pl.const(1, pl.INT32))
            return o2

    after = passes.convert_tensor_to_tile_ops()(Separate)
    names = {n.op.name for n in collect(after["k"].body, lambda n: isinstance(n, ir.Call) and hasattr(n.op, "effects"))}
    assert {"tensor.write", "tile.store"} <= names         # both paths stay, on different tensors
