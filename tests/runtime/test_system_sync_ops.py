"""system.* synchronisation ops on the simulator: the soft all-core barrier orders GM hand-offs between
spmd blocks, cross-core events pair set with wait, and the geometry queries give the platform's counts."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.runtime import run

BARRIER = """
import pypto.language as pl

@pl.program
class Barrier:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], stage: pl.InOut[pl.Tensor[[32, 64], pl.FP32]],
             ws: pl.InOut[pl.Tensor[[1, 16], pl.INT32]],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.spmd(4, sync_start=True):
            with pl.at(level=pl.Level.CORE_GROUP):
                b: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()
                t: pl.Tensor[[8, 64], pl.FP32] = pl.slice(x, [8, 64], [b * 8, 0])
                stage = pl.assemble(stage, pl.adds(t, 1.0), [b * 8, 0])
                {barrier}
                nb: pl.Scalar[pl.INDEX] = (b + 1) % 4
                u: pl.Tensor[[8, 64], pl.FP32] = pl.slice(stage, [8, 64], [nb * 8, 0])
                out = pl.assemble(out, pl.muls(u, 2.0), [b * 8, 0])
        return out
"""


def _barrier_run(barrier: str):
    x = np.random.default_rng(2).standard_normal((32, 64), dtype=np.float32)
    stage, ws, out = np.zeros((32, 64), np.float32), np.zeros((1, 16), np.int32), np.zeros((32, 64), np.float32)
    result = run(pl.parse(BARRIER.format(barrier=barrier)))(x, stage, ws, out)
    return x, ws, out if result is None else result


def test_soft_syncall_orders_the_hand_off_between_blocks():
    x, ws, got = _barrier_run('pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=4)')
    want = 2 * (np.roll(x.reshape(4, 8, 64), -1, axis=0).reshape(32, 64) + 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert int(ws.reshape(-1)[0]) == 4          # every block arrived once


def test_soft_syncall_with_too_few_arrivals_deadlocks():
    with pytest.raises(PyptoError, match="system.syncall"):
        _barrier_run('pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=5)')


def test_hard_syncall_is_named_as_not_simulated():
    with pytest.raises(PyptoError, match=r"syncall\(mode='hard'\) is not simulated"):
        _barrier_run("pl.system.syncall()")


EVENTS = """
import pypto.language as pl

@pl.program
class Events:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        pl.system.sync_set(3, pipe=pl.PipeType.MTE2)
        pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)
        pl.system.cacheinvalid()
        out = pl.store(pl.adds(t, 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.kernel(x, out)
        return out
"""


def test_events_pair_set_with_wait(tmp_path):
    x = np.ones((16, 64), np.float32)
    out = np.zeros_like(x)
    result = run(pl.parse(EVENTS))(x, out)
    np.testing.assert_array_equal(out if result is None else result, x + 1)
    ir.compile(pl.parse(EVENTS), output_dir=tmp_path)
    pto = (tmp_path / "ptoas" / "kernel.pto").read_text()
    assert "pto.sync.set <PIPE_MTE2>, 3" in pto and "pto.sync.wait <PIPE_MTE2>, 3" in pto
    assert "pto.cmo.cacheinvalid all #pto.address_space<gm>" in pto


def test_a_wait_without_its_set_deadlocks():
    text = EVENTS.replace("        pl.system.sync_set(3, pipe=pl.PipeType.MTE2)\n", "")
    with pytest.raises(PyptoError, match="system.sync_wait"):
        run(pl.parse(text))(np.ones((16, 64), np.float32), np.zeros((16, 64), np.float32))


def test_event_ids_are_checked():
    with pytest.raises(PyptoError, match="event_id 14 is outside the user range"):
        pl.parse(EVENTS.replace("sync_set(3", "sync_set(14"))


GEOMETRY = """
import pypto.language as pl

@pl.program
class Geometry:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.Out[pl.Tensor[[1, 2], pl.INT32]]) -> pl.Tensor[[1, 2], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a: pl.Scalar[pl.INDEX] = pl.system.available_aiv_count()
            c: pl.Scalar[pl.INDEX] = pl.system.available_cluster_count()
            out = pl.write(out, [0, 0], pl.cast(a, pl.INT32))
            out = pl.write(out, [0, 1], pl.cast(c, pl.INT32))
        return out
"""


def test_geometry_queries_read_the_platform():
    from pypto.ir.platform import get_platform
    out = np.zeros((1, 2), np.int32)
    result = run(pl.parse(GEOMETRY))(out)
    got = out if result is None else result
    clusters = get_platform("a2a3").clusters
    assert got.tolist() == [[2 * clusters, clusters]]


def test_pipe_flags_pair_within_a_core():
    text = EVENTS.replace("pl.system.sync_set(3, pipe=pl.PipeType.MTE2)",
                          "pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)")
    text = text.replace("pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)",
                        "pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=1)")
    x = np.ones((16, 64), np.float32)
    out = np.zeros_like(x)
    result = run(pl.parse(text))(x, out)
    np.testing.assert_array_equal(out if result is None else result, x + 1)
    unpaired = text.replace("wait_pipe=pl.PipeType.V, event_id=1)\n        pl.system.sync_dst",
                            "wait_pipe=pl.PipeType.V, event_id=2)\n        pl.system.sync_dst")
    with pytest.raises(PyptoError, match="system.sync_dst"):
        run(pl.parse(unpaired))(x, np.zeros_like(x))
