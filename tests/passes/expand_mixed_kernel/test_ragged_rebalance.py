"""A ragged cube → vector boundary under AUTO pl.split is rebalanced (seed 004, "split code": the
partition stride S is the tile's physical half by default, and the op's lane_stride=S when
LowerAutoVectorSplit split a ragged boundary's valid region evenly). 13 valid rows of a 16-row box
give lanes of 8 and 5 at the physical half, which pto-isa cannot place; split evenly they hold 7
and 6 (TILE_UP_DOWN_ODD) in the same 8-row lane box."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir import MemorySpace, TileType
from pypto.ir.dtypes import FP32
from pypto.ir.enums import SplitMode
from pypto.ir.equality import assert_structural_equal
from pypto.ir.ops.registry import create_op_call
from pypto.passes.expand_mixed_kernel.split_code import transfer_code
from tests.passes.expand_mixed_kernel.test_auto_split_lowering import _calls, _lower


_HEAD = """
@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[VALID, 16])],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        s_vec: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[VALID, 16])] = pl.tile.move(
            s, target_memory=pl.Mem.Vec)
"""


def _before(body: str, valid: int = 13):
    """A split kernel whose cube tile `s` is valid to `valid` of 16 rows, moved to the vector side as
    `s_vec`, then `body` (text at the kernel's indentation, VALID standing for the extent)."""
    return pl.parse((_HEAD + body).replace("VALID", str(valid)))


_EXP = """
        e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[VALID, 16])] = pl.tile.exp(s_vec)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return out_1
"""
Ragged = _before(_EXP)


@pl.program
class RaggedRebalanced:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[13, 16])],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN, "split_aiv": True})
        aiv_lane: pl.Scalar[pl.INDEX] = pl.tile.get_subblock_idx()
        s_vec: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec,
                       pl.TileView(valid_shape=[pl.min(pl.max(13 - aiv_lane * 7, 0), 7), 16])] = pl.tile.aiv_shard(
            s, split=1, lane_stride=7)
        e: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec,
                   pl.TileView(valid_shape=[pl.min(pl.max(13 - aiv_lane * 7, 0), 7), 16])] = pl.tile.exp(s_vec)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(e, [0 + aiv_lane * 7, 0], out)
        return out_1


def test_a_ragged_boundary_splits_its_valid_region_evenly_in_the_physical_lane_box():
    assert_structural_equal(_lower(Ragged), RaggedRebalanced, enable_auto_mapping=True)


@pl.program
class RaggedWithLoad:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[13, 16])],
               x: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.UP_DOWN})
        s_vec: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[13, 16])] = pl.tile.move(
            s, target_memory=pl.Mem.Vec)
        x_t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16],
                                                                   target_memory=pl.Mem.Vec)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(x_t, [0, 0], out)
        out_2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(s_vec, [0, 0], out_1)
        return out_2


def test_a_split_tile_of_independent_origin_keeps_the_physical_half():
    """The load spans all 16 rows: an even split of the 13 valid rows would lose row 15 of it."""
    kernel = _lower(RaggedWithLoad).functions["kernel"]
    (shard,) = _calls(kernel, "tile.aiv_shard")
    assert shard.kwargs.get("lane_stride") is None
    assert [s.args[1].elements[0].right.right.value for s in _calls(kernel, "tile.store")] == [8, 8]


_FILL = """
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([16, 16], dtype=pl.FP32, value=0.0)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[13, 16])] = pl.tile.maximum(s_vec, z)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(STORED, [0, 0], out)
        return out_1
"""


@pytest.mark.parametrize("stored", ["m", "z"])
def test_a_constant_fill_keeps_the_physical_half(stored):
    """A fill's lane part spans the whole 8-row lane box, so an op it leads (or its store) would
    write 8 rows from lane 1's start at row 7 on lane 0 too: row 7 twice. The kernel is not split
    evenly; its 8-and-5 lanes are refused at the transfer."""
    kernel = _lower(_before(_FILL.replace("STORED", stored))).functions["kernel"]
    (shard,) = _calls(kernel, "tile.aiv_shard")
    assert shard.kwargs.get("lane_stride") is None


_SCRATCH = """
        tmp: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 16], dtype=pl.FP32,
                                                                     target_memory=pl.Mem.Vec)
        r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[13, 16])] = OP
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(r, [0, 0], out)
        return out_1
"""


@pytest.mark.parametrize("op, stride", [("pl.tile.add(s_vec, tmp)", 7), ("pl.tile.add(tmp, s_vec)", None)])
def test_scratch_is_neutral_unless_it_leads_an_op(op, stride):
    """A tile.create holds no rows of its own (a reduction's scratch); as an op's first operand it
    would give the result its whole lane box as valid extent, past the lane's stride."""
    kernel = _lower(_before(_SCRATCH.replace("OP", op))).functions["kernel"]
    (shard,) = _calls(kernel, "tile.aiv_shard")
    assert shard.kwargs.get("lane_stride") == stride


_GATHER = """
        e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[VALID, 16])] = pl.tile.exp(s_vec)
        e_mat: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[VALID, 16])] = pl.tile.move(
            e, target_memory=pl.Mem.Mat)
        out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(e_mat, [0, 0], out)
        return out_1
"""


def test_a_gather_of_an_even_valid_region_is_cut_at_the_same_stride():
    """14 of 16 rows: lanes of 7 and 7 both ways; the gather carries the stride so the cube places
    lane 1's rows at row 7, and it keeps the even code (a gather has no odd form)."""
    kernel = _lower(_before(_GATHER, 14)).functions["kernel"]
    (shard,) = _calls(kernel, "tile.aiv_shard")
    (gather,) = _calls(kernel, "tile.aic_gather")
    assert shard.kwargs["lane_stride"] == gather.kwargs["lane_stride"] == 7
    assert [d.value for d in gather.type.shape] == [16, 16] and gather.type.valid_shape[0].value == 14
    assert transfer_code(gather.type, SplitMode.UP_DOWN, gather=True, stride=7) == 1


def test_an_odd_valid_region_gathered_back_is_refused_naming_the_even_extents():
    """13 rows split evenly are 7 and 6, which a gather cannot rejoin; at the physical half they are
    8 and 5, which neither direction can place: the kernel is refused at the gather."""
    odd = _before(_GATHER, 13)
    with pytest.raises(UnsupportedError, match=r"valid extent of 13 in a box of 16 leaves the two AIV lanes 8 and 5 "
                                               r"cells.*gather needs equal halves") as err:
        _lower(odd)
    assert "any even extent" in err.value.hint


@pytest.mark.parametrize("valid, stride", [(16, None), (15, None), (0, None), (8, 4), (3, 2)])
def test_the_stride_is_stamped_only_where_it_moves_the_partition(valid, stride):
    """Fully valid or one cell short: the physical half is already the even split; empty: there is
    nothing to split. Within lane 0's box (8 or 3 of 16) the physical half would leave lane 1 idle;
    the even split shares the rows."""
    prog = _before(_EXP, valid)
    assert prog.functions["kernel"].params[0].type.valid_shape[0].value == valid
    (shard,) = _calls(_lower(prog).functions["kernel"], "tile.aiv_shard")
    assert shard.kwargs.get("lane_stride") == stride


def _acc(valid):
    return TileType([16, 16], FP32, memory_space=MemorySpace.Acc).with_valid_shape([valid, 16])


@pytest.mark.parametrize("valid, stride, code", [(13, 7, 3), (12, 6, 1), (11, 6, 3), (3, 2, 3), (2, 1, 1)])
def test_the_split_code_follows_the_balanced_lanes(valid, stride, code):
    assert transfer_code(_acc(valid), SplitMode.UP_DOWN, stride=stride) == code


def test_a_stride_outside_the_lane_box_is_a_type_error():
    x = ir.Var("x", _acc(13))
    with pytest.raises(TypeCheckError, match=r"lane_stride must be a partition stride in 1\.\.8 .*got 9"):
        create_op_call("tile.aiv_shard", [x], {"split": 1, "lane_stride": 9})
    with pytest.raises(TypeCheckError, match="split=0 has none"):
        create_op_call("tile.aiv_shard", [x], {"split": 0, "lane_stride": 4})
