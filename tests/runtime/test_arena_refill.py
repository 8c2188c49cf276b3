"""A run's arena refill: the bytes tile views were ever handed on a core are poison again before the
run's first kernel there binds its tiles; bytes never handed out still hold their first poison."""

import numpy as np

from pypto.ir.enums import MemorySpace
from pypto.ir.platform import get_platform
from pypto.runtime.sim.machine import Machine
from pypto.runtime.sim.poison import POISON_BYTE


def test_the_refill_covers_every_byte_a_view_was_handed():
    machine = Machine(get_platform("a2a3"))
    core = machine.aiv_cores[0]
    core.begin_run(machine.new_run())
    assert core.poison_if_due()
    low = core.bind(MemorySpace.Vec, 0, (8,), np.float32, "tile low")
    high = core.bind(MemorySpace.Vec, 4096, (8,), np.float32, "tile high")
    low[:] = 1.0
    high[:] = 2.0
    assert core.handed[MemorySpace.Vec] == (0, 4096 + 32)
    core.begin_run(machine.new_run())
    assert core.poison_due
    assert core.poison_if_due()
    arena = core.arena(MemorySpace.Vec)
    assert (arena == POISON_BYTE).all()
    assert not core.poison_if_due()            # once per run


def test_a_kernel_s_data_stays_until_the_next_run():
    machine = Machine(get_platform("a2a3"))
    core = machine.aiv_cores[1]
    core.begin_run(machine.new_run())
    view = core.bind(MemorySpace.Vec, 0, (4,), np.float32, "tile t")
    assert core.poison_if_due()
    view[:] = 3.0
    assert not core.poison_if_due()            # the same run: the kernel's data stays
    np.testing.assert_array_equal(view, 3.0)


def test_copy_if_written_copies_a_fully_written_buffer_and_refuses_poison():
    from pypto.runtime.sim import poison
    buf = poison.poison_output(np.empty((3, poison.COPY_CHUNK // 2 + 5), np.float32))
    user = np.full_like(buf, 7.0)
    buf[:] = 1.5
    assert poison.copy_if_written(user, buf)
    np.testing.assert_array_equal(user, 1.5)
    poison.poison_output(buf)
    buf[:2] = 2.5                                  # the first chunk is written, the last row is not
    user[:] = 7.0
    assert not poison.copy_if_written(user, buf)
    assert np.isin(user, [2.5, 7.0]).all()         # poison never reaches the caller: only written chunks moved
    assert (user.reshape(-1)[:poison.COPY_CHUNK] == 2.5).all()
    np.testing.assert_array_equal(user[2], 7.0)


def test_copy_if_written_on_a_buffer_of_one_chunk():
    from pypto.runtime.sim import poison
    buf = poison.poison_output(np.empty((4, 8), np.int32))
    user = np.full_like(buf, -3)
    buf[:, :7] = 5
    assert not poison.copy_if_written(user, buf)
    np.testing.assert_array_equal(user, -3)        # nothing moved
    buf[:, 7] = 6
    assert poison.copy_if_written(user, buf)
    assert (user[:, :7] == 5).all() and (user[:, 7] == 6).all()
