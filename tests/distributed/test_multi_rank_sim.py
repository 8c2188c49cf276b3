"""The multi-rank simulator: host orchestrator, symmetric windows, notify / wait, remote_load, deadlocks."""

from __future__ import annotations

import numpy as np
import pytest

from pypto import ir
from pypto.errors import DeadlockError, PyptoError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import DistributedCompiledProgram, RunConfig

from tests.distributed.programs import handrolled_barrier


def compile_dist(prog, n):
    return ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))


@pytest.mark.parametrize("n", [2, 4])
def test_handrolled_barrier_signal_rows(n):
    compiled = compile_dist(handrolled_barrier(n), n)
    assert isinstance(compiled, DistributedCompiledProgram)
    y = np.full((n, n, 1), -7, np.int32)
    compiled(y)
    expected = 1 - np.eye(n, dtype=np.int32)       # every peer arrived, nobody notifies itself
    np.testing.assert_array_equal(y[..., 0], expected)


@pytest.mark.parametrize("seed", range(5))
def test_handrolled_barrier_random_schedules(seed):
    n = 4
    compiled = compile_dist(handrolled_barrier(n), n)
    y = np.zeros((n, n, 1), np.int32)
    compiled(y, config=RunConfig(sim_schedule="random", sim_seed=seed))
    np.testing.assert_array_equal(y[..., 0], 1 - np.eye(n, dtype=np.int32))


def test_wait_that_never_fires_is_a_deadlock_naming_rank_core_op_and_line():
    n = 2
    compiled = compile_dist(handrolled_barrier(n, expected=2), n)   # each peer sends one credit, not two
    with pytest.raises(DeadlockError) as info:
        compiled(np.zeros((n, n, 1), np.int32))
    msg = str(info.value)
    for r in range(n):
        assert f"rank {r} AIV core" in msg
    assert "pld.system.wait" in msg and "programs.py:" in msg
    assert "= 1, waits for >= 2" in msg


def test_remote_peer_outside_the_world_is_refused():
    one = compile_dist(handrolled_barrier(2), 1)      # a 2-rank recipe run on a 1-rank world
    with pytest.raises(PyptoError, match="peer rank 1 is outside the world of 1 ranks"):
        one(np.zeros((2, 2, 1), np.int32))


def test_host_arrays_untouched_when_the_run_fails():
    compiled = ir.compile(handrolled_barrier(2), platform="a2a3sim",
                          distributed_config=DistributedConfig(device_ids=[0]))
    y = np.full((2, 2, 1), 5, np.int32)
    with pytest.raises(PyptoError):
        compiled(y)
    assert (y == 5).all()


def test_the_host_orchestration_artifact_is_the_code_that_runs(tmp_path):
    n = 2
    compiled = ir.compile(handrolled_barrier(n), platform="a2a3sim", output_dir=tmp_path,
                          distributed_config=DistributedConfig(device_ids=list(range(n))))
    path = tmp_path / "orchestration" / "host.host_orch.py"
    text = path.read_text()
    assert "yield pld.dispatch(r, 'per_rank'" in text and "pld.alloc_window_buffer(" in text
    code = compiled.host_code()
    assert code.source == text and code.fn.__code__.co_filename == str(path)
    y = np.zeros((n, n, 1), np.int32)
    compiled(y)
    np.testing.assert_array_equal(y[..., 0], 1 - np.eye(n, dtype=np.int32))
