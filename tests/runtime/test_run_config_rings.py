"""RunConfig accepts the device runtime's ring sizes and rejects sizes the device would refuse."""

import pytest

from pypto.errors import PyptoError
from pypto.runtime import RunConfig


def test_ring_sizes_scalar_and_per_ring_list_are_accepted():
    cfg = RunConfig(ring_task_window=1024, ring_heap=[0, 2048, 4096, 1 << 20], ring_dep_pool=16)
    assert cfg.ring_task_window == 1024
    assert cfg.ring_heap[1] == 2048


@pytest.mark.parametrize("kwargs, fragment", [
    ({"ring_task_window": 6}, "power of two >= 4"),
    ({"ring_heap": 512}, "power of two >= 1024"),
    ({"ring_dep_pool": 2}, "ring_dep_pool"),
    ({"ring_task_window": [8, 16]}, "exactly 4"),
    ({"ring_task_window": 0}, "power of two"),
])
def test_bad_ring_sizes_are_pypto_errors(kwargs, fragment):
    with pytest.raises(PyptoError, match=fragment):
        RunConfig(**kwargs)


def test_unknown_platform_is_a_pypto_error_and_a_value_error():
    with pytest.raises(PyptoError, match="unknown platform") as info:
        RunConfig(platform="npu9000")
    assert isinstance(info.value, ValueError)
