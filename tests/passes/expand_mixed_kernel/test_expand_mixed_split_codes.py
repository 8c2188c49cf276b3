"""Split codes 1-4 from lane extents (seed 004 "split code"), and the rejection of unplaceable extents."""

import pytest

from pypto.errors import UnsupportedError
from pypto.ir import MemorySpace, TileType
from pypto.ir.dtypes import FP32
from pypto.ir.enums import SplitMode
from pypto.passes.expand_mixed_kernel.split_code import transfer_code

UD, LR = SplitMode.UP_DOWN, SplitMode.LEFT_RIGHT


def _tile(shape, valid=None):
    t = TileType(shape, FP32, memory_space=MemorySpace.Acc)
    return t.with_valid_shape(valid) if valid is not None else t


@pytest.mark.parametrize("shape, valid, mode, code", [
    ([128, 128], None, UD, 1), ([128, 128], [127, 128], UD, 3), ([127, 128], None, UD, 3),
    ([128, 128], None, LR, 2), ([128, 15], None, LR, 4), ([16, 16], [5, 16], UD, 1)])
def test_codes_follow_the_lane_extents(shape, valid, mode, code):
    assert transfer_code(_tile(shape, valid), mode) == code


def test_ragged_extents_are_rejected_with_the_feasible_values():
    with pytest.raises(UnsupportedError, match="leaves the two AIV lanes 64 and 36 cells.*at most 64, or 128 or 127"):
        transfer_code(_tile([128, 128], [100, 128]), UD)
    with pytest.raises(UnsupportedError, match="vector → cube gather needs equal halves"):
        transfer_code(_tile([16, 16], [15, 16]), UD, gather=True)
