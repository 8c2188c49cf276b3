"""pl.slice(..., drop_dims=[k]): a rank-reducing slice (numpy's x[i] on a unit axis). The window is typed
without the erased axes and is valid only where its source is; ConvertTensorToTileOps loads the full-rank
window and reshapes it to the kept axes (a Mat load when a matmul consumes it). Checked on the types, the
converted program, and numpy-equal runs on both simulators (in a kernel and in orchestration)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP32
from pypto.ir.op import tensor_ops
from pypto.ir.types import TensorType, TensorView
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run
from tests.helpers import op_calls

RNG = np.random.default_rng(7)


def _dims(dims):
    return [d.value for d in dims]


def test_the_result_drops_unit_axes_and_keeps_the_source_valid_region():
    x = ir.Var("x", TensorType([3, 64], FP32, tensor_view=TensorView(valid_shape=[3, 12])))
    row = tensor_ops.slice(x, [1, 64], [2, 0], drop_dims=[0]).type
    assert _dims(row.shape) == [64] and _dims(row.valid_shape) == [12]
    assert _dims(tensor_ops.slice(x, [1, 64], [1, 0], valid_shape=[1, 8], drop_dims=[0]).type.valid_shape) == [8]
    with pytest.raises(TypeCheckError, match="only a static unit axis"):
        tensor_ops.slice(x, [2, 64], [0, 0], drop_dims=[0])
    with pytest.raises(TypeCheckError, match="cannot erase every axis"):
        tensor_ops.slice(ir.Var("y", TensorType([1, 1], FP32)), [1, 1], [0, 0], drop_dims=[0, 1])


@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 64], pl.FP32], w: pl.Tensor[[2, 64, 32], pl.FP16],
          a: pl.Tensor[[16, 64], pl.FP16]) -> tuple[pl.Tensor[[64], pl.FP32], pl.Tensor[[16, 32], pl.FP32]]:
        row: pl.Tensor[[64], pl.FP32] = pl.slice(x, [1, 64], [2, 0], drop_dims=[0])
        doubled: pl.Tensor[[64], pl.FP32] = pl.add(row, row)
        w1: pl.Tensor[[64, 32], pl.FP16] = pl.slice(w, [1, 64, 32], [1, 0, 0], drop_dims=[0])
        prod: pl.Tensor[[16, 32], pl.FP32] = pl.matmul(a, w1, out_dtype=pl.FP32)
        return doubled, prod


def test_conversion_loads_the_full_window_then_reshapes():
    kernel = convert_tensor_to_tile_ops()(Rows)["k"]
    loads = {c.args[0].name_hint: c for c in op_calls(kernel, "tile.load")}
    assert _dims(loads["x"].args[2].elements) == [1, 64] and loads["x"].type.memory_space is pl.Mem.Vec
    assert _dims(loads["w"].args[2].elements) == [1, 64, 32] and loads["w"].type.memory_space is pl.Mem.Mat
    reshapes = op_calls(kernel, "tile.reshape")
    assert sorted(_dims(r.args[1].elements) for r in reshapes) == [[64], [64, 32]]
    assert all(isinstance(r.args[0], ir.Var) for r in reshapes)     # the load is bound first
    (mm,) = op_calls(kernel, "tile.matmul")
    assert _dims(mm.args[1].type.shape) == [64, 32]


@pl.program
class RowsRun:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 64], pl.FP32], w: pl.Tensor[[2, 64, 32], pl.FP16],
             a: pl.Tensor[[16, 64], pl.FP16], out_row: pl.Out[pl.Tensor[[64], pl.FP32]],
             out_prod: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            row = pl.slice(x, [1, 64], [2, 0], drop_dims=[0])
            out_row = pl.assemble(out_row, pl.add(row, row), [0])
        with pl.at(level=pl.Level.CORE_GROUP):
            w1 = pl.slice(w, [1, 64, 32], [1, 0, 0], drop_dims=[0])
            out_prod = pl.assemble(out_prod, pl.matmul(a, w1, out_dtype=pl.FP32), [0, 0])
        return out_row, out_prod


@pl.program
class OrchView:
    @pl.function(type=pl.FunctionType.InCore)
    def neg(self, r: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = pl.neg(r)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        row: pl.Tensor[[64], pl.FP32] = pl.slice(x, [1, 64], [3, 0], drop_dims=[0])
        y: pl.Tensor[[64], pl.FP32] = self.neg(row)
        return y


def test_the_reshaped_mat_operand_stays_on_the_cube():
    """tile.reshape moves no data: the Mat reshape runs on the AIC, so the matmul kernel is not split."""
    kernels = ir.compile(RowsRun).lowered.functions
    assert not any(name.endswith(("_aic", "_aiv")) for name in kernels)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_rank_reducing_slices_match_numpy(platform):
    cfg = RunConfig(platform=platform)
    x = RNG.uniform(-1, 1, (4, 64)).astype(np.float32)
    w = RNG.uniform(-1, 1, (2, 64, 32)).astype(np.float16)
    a = RNG.uniform(-1, 1, (16, 64)).astype(np.float16)
    row, prod = np.zeros(64, np.float32), np.zeros((16, 32), np.float32)
    run(RowsRun, config=cfg)(x, w, a, row, prod)
    np.testing.assert_array_equal(row, x[2] + x[2])
    np.testing.assert_allclose(prod, a.astype(np.float32) @ w[1].astype(np.float32), rtol=1e-5, atol=1e-5)
    got = run(OrchView, config=cfg)(x)
    np.testing.assert_array_equal(np.asarray(got), -x[3])


def test_a_reshape_that_only_erases_or_inserts_unit_axes_keeps_a_partial_region():
    from pypto.ir.dtypes import FP16
    from pypto.ir.ops.registry import create_op_call
    from pypto.ir.types import TileType

    def reshaped(shape, valid, to, space=pl.Mem.Vec):
        t = ir.Var("t", TileType(shape, FP16, memory_space=space).with_valid_shape(valid))
        return _dims(create_op_call("tile.reshape", [t, to]).type.valid_shape)

    assert reshaped([1, 64], [1, 12], [64]) == [12]
    assert reshaped([1, 64, 32], [1, 64, 16], [64, 32], pl.Mem.Mat) == [64, 16]
    assert reshaped([64], [12], [1, 64]) == [1, 12]
    with pytest.raises(TypeCheckError, match="valid region is partial"):     # an erased axis must be valid
        reshaped([2, 1, 64], [2, 0, 64], [2, 64])
