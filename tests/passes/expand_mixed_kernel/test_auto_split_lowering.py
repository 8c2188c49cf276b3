"""LowerAutoVectorSplit on the AUTO form (seed 004): a mixed InCore kernel carrying split=M, called
on its own, becomes lane code — C→V moves turn into tile.aiv_shard, V→C moves into tile.aic_gather,
Vec tiles are cut per lane — and its boundaries have the types the explicit pl.aiv_shard /
pl.aic_gather path gives (seed 003: both are built by the ops' Create)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.equality import assert_structural_equal
from pypto.ir.ops.registry import create_op_call
from pypto.passes import lower_auto_vector_split
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.passes.instruments import make_roundtrip_instrument
from pypto.runtime import RunConfig


def _lower(program):
    """The pass alone, with the print → parse roundtrip checked on its output."""
    with PassContext([make_roundtrip_instrument(pl.parse)]):
        return lower_auto_vector_split()(program)


def _calls(func, name):
    return [c for c in calls_in(func.body) if getattr(c.op, "name", None) == name]


@pl.program
class CubeToVector:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
               bias: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        a_mat: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], [16, 32],
                                                                     target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 16], [32, 16],
                                                                     target_memory=pl.Mem.Mat)
        a_l: pl.Tile[[16, 32], pl.FP16, pl.Mem.Left] = pl.tile.move(a_mat, target_memory=pl.Mem.Left)
        b_r: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_l, b_r)
        z_vec: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.move(z, target_memory=pl.Mem.Vec)
        bias_t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [16, 16], [16, 16],
                                                                      target_memory=pl.Mem.Vec)
        y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(z_vec, bias_t)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(y, [0, 0], out)
        return out_1


@pl.program
class CubeToVectorLowered:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
               bias: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN, "split_aiv": True})
        aiv_lane: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
        a_mat: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], [16, 32],
                                                                     target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 16], [32, 16],
                                                                     target_memory=pl.Mem.Mat)
        a_l: pl.Tile[[16, 32], pl.FP16, pl.Mem.Left] = pl.tile.move(a_mat, target_memory=pl.Mem.Left)
        b_r: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a_l, b_r)
        z_vec: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.aiv_shard(z, split=1)
        bias_t: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0 + aiv_lane * 8, 0], [8, 16], [8, 16],
                                                                     target_memory=pl.Mem.Vec)
        y: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(z_vec, bias_t)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(y, [0 + aiv_lane * 8, 0], out)
        return out_1


def test_a_cube_to_vector_move_becomes_a_shard_and_the_vector_code_per_lane():
    assert_structural_equal(_lower(CubeToVector), CubeToVectorLowered, enable_auto_mapping=True)


@pl.program
class VectorToCube:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        x_t: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32], [16, 32],
                                                                   target_memory=pl.Mem.Vec)
        x2: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.add(x_t, x_t)
        x_l: pl.Tile[[16, 32], pl.FP16, pl.Mem.Left] = pl.tile.move(x2, target_memory=pl.Mem.Left)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 16], [32, 16],
                                                                     target_memory=pl.Mem.Mat)
        b_r: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_l, b_r)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(z, [0, 0], out)
        return out_1


def test_a_vector_to_left_move_becomes_a_gather_into_mat_then_a_cube_move():
    kernel = _lower(VectorToCube).functions["kernel"]
    (gather,) = _calls(kernel, "tile.aic_gather")
    assert gather.kwargs["split"] == 1
    assert [d.value for d in gather.args[0].type.shape] == [8, 32]          # the lane's half goes in
    assert [d.value for d in gather.type.shape] == [16, 32] and gather.type.memory_space is MemorySpace.Mat
    to_left = [c for c in _calls(kernel, "tile.move") if c.kwargs["target_memory"] is MemorySpace.Left]
    assert [c.args[0].type.memory_space for c in to_left] == [MemorySpace.Mat]
    assert to_left[0].args[0].name_hint == "x_l_mat"
    (matmul,) = _calls(kernel, "tile.matmul")
    assert [d.value for d in matmul.type.shape] == [16, 16]                 # the cube side stays whole
    (store,) = _calls(kernel, "tile.store")
    assert store.args[1].elements[0].value == 0                             # an Acc store is not moved per lane


def _explicit(op: str, operand_type):
    return create_op_call(op, [ir.Var("t", operand_type)], {"split": 1}).type


def test_the_auto_boundaries_have_the_explicit_ops_types():
    cube = _lower(CubeToVector).functions["kernel"]
    (shard,) = _calls(cube, "tile.aiv_shard")
    assert_structural_equal(shard.type, _explicit("tile.aiv_shard", shard.args[0].type))
    vector = _lower(VectorToCube).functions["kernel"]
    (gather,) = _calls(vector, "tile.aic_gather")
    assert_structural_equal(gather.type, _explicit("tile.aic_gather", gather.args[0].type))


@pl.program
class FillToAcc:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        zero: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.move(zero, target_memory=pl.Mem.Acc)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(acc, [0, 0], out)
        x_t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16],
                                                                   target_memory=pl.Mem.Vec)
        out_2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(x_t, [0, 0], out_1)
        return out_2


def test_a_constant_fill_handed_to_the_cube_stays_whole_and_a_move():
    kernel = _lower(FillToAcc).functions["kernel"]
    assert not _calls(kernel, "tile.aic_gather")
    (full,) = _calls(kernel, "tile.full")
    assert [d.value for d in full.type.shape] == [16, 16]
    (load,) = _calls(kernel, "tile.load")
    assert [d.value for d in load.type.shape] == [8, 16]


@pl.program
class PureVector:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        x_t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16],
                                                                   target_memory=pl.Mem.Vec)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(x_t, [0, 0], out)
        return out_1


def test_a_pure_vector_kernel_is_left_whole_for_split_vector_kernel():
    assert _lower(PureVector) is PureVector


@pl.program
class GatherOfAWholeTile:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, b: pl.Tensor[[32, 16], pl.FP16],
               out: pl.Out[pl.Tensor[[1, 16], pl.FP32]]) -> pl.Tensor[[1, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        row: pl.Tile[[1, 32], pl.FP16, pl.Mem.Vec] = pl.tile.full([1, 32], dtype=pl.FP16, value=1.0)
        row2: pl.Tile[[1, 32], pl.FP16, pl.Mem.Vec] = pl.tile.add(row, row)
        row_l: pl.Tile[[1, 32], pl.FP16, pl.Mem.Left] = pl.tile.move(row2, target_memory=pl.Mem.Left)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 16], [32, 16],
                                                                     target_memory=pl.Mem.Mat)
        b_r: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[1, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(row_l, b_r)
        out_1: pl.Tensor[[1, 16], pl.FP32] = pl.tile.store(z, [0, 0], out)
        return out_1


def test_a_vector_tile_the_lanes_cannot_cut_is_refused_at_its_move():
    with pytest.raises(UnsupportedError, match=r"pl.split\(UP_DOWN\): tile.move moves a Vec tile that is not cut "
                                               r"per lane \(rows: 1\)"):
        _lower(GatherOfAWholeTile)


@pl.jit
def split_v2c_mat(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):
        x = pl.load(a, [0, 0], [32, 16])
        x_mat = pl.move(pl.mul(x, x), target_memory=pl.Mem.Mat)
        right = pl.move(x_mat, target_memory=pl.Mem.Right)
        left = pl.move(pl.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        pl.store(pl.matmul(left, right), [0, 0], c)
    return c


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_left_right_gather_into_mat_runs_numpy_equal(platform):
    rng = np.random.default_rng(21)
    a = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    c = np.full((16, 16), np.nan, np.float32)
    split_v2c_mat(a, b, c, config=RunConfig(platform=platform))
    sq = (a * a).astype(np.float32)
    np.testing.assert_allclose(c, b.astype(np.float32) @ sq, rtol=1e-3, atol=1e-3)


@pl.jit
def shard_then_gather(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        s = pl.matmul(q, k, b_trans=True, out_dtype=pl.FP32)
        p = pl.cast(pl.exp(s), pl.FP16)
        o = pl.assemble(o, pl.matmul(p, v, out_dtype=pl.FP32), [0, 0])
    return o


def test_an_odd_extent_gathered_back_to_the_cube_is_refused_with_the_feasible_extents():
    args = (np.zeros((15, 32), np.float16), np.zeros((16, 32), np.float16), np.zeros((16, 32), np.float16),
            np.zeros((15, 32), np.float32))
    with pytest.raises(UnsupportedError, match=r"lanes 8 and 7 cells.*a vector → cube gather needs equal halves"):
        shard_then_gather.lower(*args, config=RunConfig(platform="a5sim"))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_shard_then_gather_in_one_kernel_runs_numpy_equal(platform):
    rng = np.random.default_rng(22)
    q, k, v = (rng.uniform(-1, 1, (16, 32)).astype(np.float16) for _ in range(3))
    o = np.full((16, 32), np.nan, np.float32)
    shard_then_gather(q, k, v, o, config=RunConfig(platform=platform))
    p = np.exp(q.astype(np.float32) @ k.astype(np.float32).T).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(o, p @ v.astype(np.float32), rtol=2e-3, atol=2e-3)
