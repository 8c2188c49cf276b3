"""tile.reshape of a partially valid tile: a row-prefix region (only the first extent partial)
survives a reshape that merges / splits the leading axes exactly; anything else is rejected."""

import pytest

from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.ops import create_op_call
from pypto.ir.types import TileType


def _tile(shape, valid):
    return ir.Var("t", TileType(shape, FP32, tile_view=ir.TileView(valid_shape=valid), memory_space=ir.Mem.Vec))


def _static(dims):
    return [d.value if isinstance(d, ir.ConstInt) else d for d in dims]


def test_a_row_prefix_keeps_its_rows_through_a_same_width_reshape():
    out = create_op_call("tile.reshape", [_tile([16, 16], [8, 16]), [16, 16]]).type
    assert _static(out.valid_shape) == [8, 16]


def test_merging_leading_axes_multiplies_the_valid_rows():
    out = create_op_call("tile.reshape", [_tile([2, 8, 16], [1, 8, 16]), [16, 16]]).type
    assert _static(out.valid_shape) == [8, 16]
    flat = create_op_call("tile.reshape", [_tile([4, 16], [3, 16]), [64]]).type
    assert _static(flat.valid_shape) == [48]


def test_a_symbolic_row_count_stays_symbolic():
    lane = ir.Var("lane", ir.ScalarType(INDEX))
    rows = ir.BinaryExpr("mul", ir.ConstInt(16, INDEX), ir.BinaryExpr("sub", ir.ConstInt(1, INDEX), lane))
    out = create_op_call("tile.reshape", [_tile([16, 16], [rows, 16]), [16, 16]]).type
    assert out.valid_shape[0] is rows and _static(out.valid_shape[1:]) == [16]


@pytest.mark.parametrize("shape, valid, to", [([16, 16], [16, 8], [256]),        # a column prefix is not contiguous
                                               ([16, 16], [8, 16], [32, 8]),     # rows would split mid-row
                                               ([16, 16], [8, 8], [256])])
def test_other_partial_regions_are_rejected(shape, valid, to):
    with pytest.raises(TypeCheckError, match="valid region is partial"):
        create_op_call("tile.reshape", [_tile(shape, valid), to])
