"""Runtime values the simulator passes between ops.

A TileValue is a typed numpy view into its core's arena at the tile's assigned address
(`data` has the tile's full physical shape); `valid` is the valid region (rows, cols, ...)
as ints. Ops read and write only the valid region; the rest keeps whatever bytes the
arena held (poison on fresh memory), as on hardware.
GM tensors are plain numpy arrays (possibly views of a larger array).
"""

from __future__ import annotations

import numpy as np


class TileValue:
    __slots__ = ("data", "valid", "space")

    def __init__(self, data: np.ndarray, valid: tuple, space=None):
        self.data = data
        self.valid = tuple(int(v) for v in valid)
        self.space = space

    @property
    def region(self) -> tuple:
        """Index tuple selecting the valid region of `data`."""
        return tuple(slice(0, v) for v in self.valid)

    def view(self) -> np.ndarray:
        """The valid region as a numpy view."""
        return self.data[self.region]

    def __repr__(self) -> str:
        return f"TileValue(shape={self.data.shape}, valid={self.valid}, dtype={self.data.dtype}, space={self.space})"
