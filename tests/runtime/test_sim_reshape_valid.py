"""The simulator's tile.reshape carries a row-prefix valid region (the one partial form the type rule
accepts) instead of marking the whole result valid: lane 1 of a dual dispatch reshapes an empty
tile, and its result must stay empty at run time as its type says."""

import numpy as np
import pytest

from pypto.errors import SimulationError
from pypto.runtime.sim.ops.tile import reshape
from pypto.runtime.sim.values import TileValue


def _tile(shape, valid):
    return TileValue(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), valid)


def test_a_full_tile_reshapes_fully_valid():
    out = reshape(None, _tile((16, 8), (16, 8)), _tile((2, 8, 8), (2, 8, 8)), (16, 8))
    assert out.valid == (16, 8)
    np.testing.assert_array_equal(out.data, np.arange(128, dtype=np.float32).reshape(16, 8))


def test_merging_leading_axes_keeps_the_valid_rows():
    out = reshape(None, _tile((16, 8), (16, 8)), _tile((2, 8, 8), (1, 8, 8)), (16, 8))
    assert out.valid == (8, 8)


def test_an_empty_tile_stays_empty():
    assert reshape(None, _tile((16, 8), (16, 8)), _tile((2, 8, 8), (0, 8, 8)), (16, 8)).valid == (0, 8)


def test_a_region_that_is_not_a_row_prefix_is_an_error():
    with pytest.raises(SimulationError, match="not a row prefix"):
        reshape(None, _tile((16, 8), (16, 8)), _tile((2, 8, 8), (2, 8, 4)), (16, 8))
