"""The race detector's byte bounds of a window, worked out from the tensor's layout, equal numpy's
byte_bounds of the view (None for an empty view)."""

import random

import numpy as np

from pypto.runtime.sim.race_detector import _window_bounds, byte_bounds


def test_window_bounds_match_the_view():
    rng = random.Random(0)
    tensors = [np.zeros((8, 16), np.float32), np.zeros((4, 5, 6), np.int8), np.zeros((8, 16))[:, ::2],
               np.zeros((8, 16), np.float32).T, np.zeros((6, 6))[::-1]]
    for _ in range(3000):
        t = rng.choice(tensors)
        window = tuple(slice(rng.randint(-3, n + 2), rng.randint(-3, n + 3)) for n in t.shape[:rng.randint(0, t.ndim)])
        view = t[window]
        assert _window_bounds(t, window, {}) == (None if view.size == 0 else byte_bounds(view))
