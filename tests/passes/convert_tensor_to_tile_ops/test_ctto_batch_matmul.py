"""A tensor.matmul / matmul_acc with batch dims (an operand of rank > 2; leading dims broadcast like
numpy's matmul) lowers to tile.batch_matmul / tile.batch_matmul_acc on Mat operands, a transposed operand
being a natural Mat load plus tile.transpose_view; FlattenTileNdTo2D then runs one 2-D matmul per batch
(a broadcast operand is read at its own batch, a transposed one is cut per batch and transposed). Checked
structurally and numpy-equal on both simulators."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import TypeCheckError
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls

RNG = np.random.default_rng(23)


@pl.program
class SharedLhs:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.BF16], w0: pl.Tensor[[1, 32, 64], pl.BF16],
          w1: pl.Tensor[[1, 32, 64], pl.BF16]) -> pl.Tensor[[1, 16, 32], pl.FP32]:
        part: pl.Tensor[[1, 16, 32], pl.FP32] = pl.matmul(x, w0, b_trans=True, out_dtype=pl.FP32)
        both: pl.Tensor[[1, 16, 32], pl.FP32] = pl.matmul_acc(part, x, w1, b_trans=True)
        return both


def test_batched_products_become_batch_matmuls_on_mat_operands():
    calls = op_calls(convert_tensor_to_tile_ops()(SharedLhs)["k"])
    names = [c.op.name for c in calls]
    assert names.count("tile.batch_matmul") == 1 and names.count("tile.batch_matmul_acc") == 1
    assert "tile.matmul" not in names and "tile.matmul_acc" not in names
    views = [c for c in calls if c.op.name == "tile.transpose_view"]
    assert len(views) == 2
    for v in views:      # natural [1, 32, 64] Mat load, viewed as [1, 64, 32]
        assert [d.value for d in v.args[0].type.shape] == [1, 32, 64]
        assert [d.value for d in v.type.shape] == [1, 64, 32] and v.type.memory_space is pl.Mem.Mat
    first = next(c for c in calls if c.op.name == "tile.batch_matmul")
    assert first.args[0].type.rank == 2 and first.type.memory_space is pl.Mem.Acc
    assert [d.value for d in first.type.shape] == [1, 16, 32]


def test_tensor_matmul_broadcasts_batch_dims_and_rejects_mismatched_ones():
    from pypto.ir.ops.registry import create_op_call
    from pypto.ir import TensorType, Var
    from pypto.ir.dtypes import FP16
    a, b = Var("a", TensorType([3, 1, 16, 8], FP16)), Var("b", TensorType([2, 8, 4], FP16))
    t = create_op_call("tensor.matmul", [a, b], {}).type
    assert [d.value for d in t.shape] == [3, 2, 16, 4]
    c = Var("c", TensorType([5, 8, 4], FP16))
    with pytest.raises(TypeCheckError, match="do not broadcast"):
        create_op_call("tensor.matmul", [Var("d", TensorType([3, 16, 8], FP16)), c], {})


@pl.program
class Broadcast:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], w: pl.Tensor[[3, 32, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[3, 16, 16], pl.FP32]]) -> pl.Tensor[[3, 16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.matmul(a, w, out_dtype=pl.FP32), [0, 0, 0])
        return out


@pl.program
class TransposedAcc:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], w0: pl.Tensor[[1, 16, 32], pl.FP16],
             w1: pl.Tensor[[1, 16, 32], pl.FP16],
             out: pl.Out[pl.Tensor[[1, 16, 16], pl.FP32]]) -> pl.Tensor[[1, 16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.matmul(a, w0, b_trans=True, out_dtype=pl.FP32)
            out = pl.assemble(out, pl.matmul_acc(acc, a, w1, b_trans=True), [0, 0, 0])
        return out


@pl.program
class BothTransposed:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 32, 16], pl.FP16], w: pl.Tensor[[2, 16, 32], pl.FP16],
             out: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.matmul(a, w, a_trans=True, b_trans=True, out_dtype=pl.FP32), [0, 0, 0])
        return out


def _f32(x):
    return x.astype(np.float32)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_batched_matmuls_match_numpy(platform):
    cfg = RunConfig(platform=platform)
    a = RNG.uniform(-1, 1, (16, 32)).astype(np.float16)
    w = RNG.uniform(-1, 1, (3, 32, 16)).astype(np.float16)
    got = np.zeros((3, 16, 16), np.float32)
    run(Broadcast, config=cfg)(a, w, got)
    np.testing.assert_allclose(got, np.matmul(_f32(a), _f32(w)), rtol=1e-5, atol=1e-5)

    w0, w1 = (RNG.uniform(-1, 1, (1, 16, 32)).astype(np.float16) for _ in range(2))
    got = np.zeros((1, 16, 16), np.float32)
    run(TransposedAcc, config=cfg)(a, w0, w1, got)
    np.testing.assert_allclose(got[0], _f32(a) @ _f32(w0[0]).T + _f32(a) @ _f32(w1[0]).T, rtol=1e-5, atol=1e-5)

    a3 = RNG.uniform(-1, 1, (2, 32, 16)).astype(np.float16)
    w3 = RNG.uniform(-1, 1, (2, 16, 32)).astype(np.float16)
    got = np.zeros((2, 16, 16), np.float32)
    run(BothTransposed, config=cfg)(a3, w3, got)
    np.testing.assert_allclose(got, np.matmul(_f32(np.swapaxes(a3, 1, 2)), _f32(np.swapaxes(w3, 1, 2))),
                               rtol=1e-5, atol=1e-5)
