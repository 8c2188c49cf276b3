"""Comm domains over a subset of the world: members are numbered 0..k-1 inside the domain.

A host collective whose windows are dispatched only to some devices runs on those devices: its
builtin is dispatched once per member, pld.rank / pld.nranks of the window's context are domain
ranks, peers are addressed through the domain, and the ranks outside it are left untouched."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import SimulationError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.stmt import CommDomainScopeStmt
from pypto.ir.visitor import collect
from pypto.passes.convert_to_ssa import convert_to_ssa
from pypto.passes.materialize_comm_domain_scopes import materialize_comm_domain_scopes
from pypto.passes.synthesize_all_reduce_signals import synthesize_all_reduce_signals
from pypto.runtime import RunConfig
from pypto.runtime.sim.world import World

WORLD = 4


def subset_allreduce(start: int, stop: int, step: int, SIZE: int, op=pld.ReduceOp.Sum):
    """Stage x[d], a host allreduce, read back y[d] — for the devices d of range(start, stop, step) only."""

    @pl.program
    class SubsetAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def stage_k(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
            t = pl.load(x, [0, 0], [1, SIZE])
            data = pl.store(t, [0, 0], data)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def read_k(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                   y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            t = pl.load(data, [0, 0], [1, SIZE])
            y = pl.store(t, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def stage(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                  data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
            data = self.stage_k(x, data)
            return data

        @pl.function(type=pl.FunctionType.Orchestration)
        def read(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                 y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
            y = self.read_k(data, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[WORLD, 1, SIZE], pl.FP32], y: pl.InOut[pl.Tensor[[WORLD, 1, SIZE], pl.FP32]]):
            data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
            for r in pl.range(start, stop, step):
                self.stage(x[r], data, device=r)
            data = pld.tensor.allreduce(data, op=op)
            for r in pl.range(start, stop, step):
                self.read(data, y[r], device=r)

    return SubsetAllReduce


@pytest.mark.parametrize("span, op", [((1, 4, 2), pld.ReduceOp.Sum), ((0, 2, 1), pld.ReduceOp.Max),
                                      ((0, 3, 1), pld.ReduceOp.Sum), ((1, 4, 1), pld.ReduceOp.Min)])
def test_host_allreduce_over_a_subset_matches_numpy_and_leaves_the_others_alone(span, op):
    members = list(range(*span))
    size = 17
    c = ir.compile(subset_allreduce(*span, size, op), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(WORLD))))
    x = np.random.default_rng(len(members)).standard_normal((WORLD, 1, size)).astype(np.float32)
    fn = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min}[op]
    ref = fn(x[members], axis=0)
    for seed in range(3):
        y = np.full_like(x, 7.0)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        for r in range(WORLD):
            if r in members:
                np.testing.assert_allclose(y[r], ref, rtol=1e-5, atol=1e-5)
            else:
                assert (y[r] == 7.0).all(), f"rank {r} is outside the domain and must stay untouched"
        for w in c.last_windows:
            assert w.members == members
            for r in set(range(WORLD)) - set(members):
                assert (w.bufs[r] == 0).all(), f"window '{w.name}' of non-member rank {r} was written"
        sig = [w for w in c.last_windows if w.nbytes != size * 4]
        assert sig and all((w.bufs[m] == 0).all() for w in sig for m in members), "signals end at zero"


def test_the_synthesized_signal_joins_the_subset_domain_of_its_data():
    prog = synthesize_all_reduce_signals()(convert_to_ssa()(subset_allreduce(1, 4, 2, 17)))
    scopes = collect(materialize_comm_domain_scopes()(prog).get_function("host").body,
                     lambda n: isinstance(n, CommDomainScopeStmt))
    assert [(sorted(b.name_hint for b in s.buffers), s.devices) for s in scopes] == \
        [(["__allreduce_signal_buf", "data_buf"], (1, 3))]


def test_subset_lowering_dispatches_once_per_member():
    c = ir.compile(subset_allreduce(1, 4, 2, 17), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(WORLD))))
    from pypto.ir.expr import Call
    builtin = [c for c in collect(c.host_function.body, lambda n: isinstance(n, Call) and n.is_function_call())
               if c.op.name.startswith("pld_builtin_allreduce")]
    assert [int(c.attrs["device"].value) for c in builtin] == [1, 3]


def test_domain_ranks_map_to_world_ranks_and_are_bounds_checked():
    world = World(4)
    w = world.alloc_window(16, "w")
    w.members = [1, 3]
    mine = w.view(3, (4,), np.float32)
    assert world.rank_of(mine, "t") == 1 and world.domain_size(mine, "t") == 2
    world.peer_view(mine, 0, "t")[:] = 5.0
    assert (w.view(1, (4,), np.float32) == 5.0).all() and (w.view(0, (4,), np.float32) == 0).all()
    with pytest.raises(SimulationError, match="outside the comm domain of 2 ranks"):
        world.peer_view(mine, 2, "t")
    with pytest.raises(SimulationError, match="not a member of the comm domain"):
        world.rank_of(w.view(2, (4,), np.float32), "t")


def subset_allgather(start: int, stop: int, C: int = 16):
    """Host allgather of the stacked shards x[d] of the devices d in range(start, stop) into a [k, C] window."""
    K = stop - start

    @pl.program
    class SubsetAllGather:
        @pl.function(type=pl.FunctionType.InCore)
        def read_k(self, data: pld.DistributedTensor[[K, C], pl.FP32],
                   y: pl.Out[pl.Tensor[[K, C], pl.FP32]]) -> pl.Tensor[[K, C], pl.FP32]:
            t = pl.load(data, [0, 0], [K, C])
            y = pl.store(t, [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def read(self, data: pld.DistributedTensor[[K, C], pl.FP32],
                 y: pl.Out[pl.Tensor[[K, C], pl.FP32]]) -> pl.Tensor[[K, C], pl.FP32]:
            return self.read_k(data, y)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[WORLD, 1, C], pl.FP32], y: pl.InOut[pl.Tensor[[WORLD, K, C], pl.FP32]]):
            buf = pld.alloc_window_buffer([K, C], dtype=pl.FP32)
            sbuf = pld.alloc_window_buffer([K, 1], dtype=pl.INT32)
            data = pld.window(buf, [K, C], dtype=pl.FP32)
            sig = pld.window(sbuf, [K, 1], dtype=pl.INT32)
            data = pld.tensor.allgather(x, data, sig)
            for r in pl.range(start, stop):
                self.read(data, y[r], device=r)

    return SubsetAllGather


def test_host_allgather_over_three_of_four_ranks_reads_the_members_shards():
    members, C = [1, 2, 3], 16
    c = ir.compile(subset_allgather(1, 4, C), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(WORLD))))
    x = np.random.default_rng(5).standard_normal((WORLD, 1, C)).astype(np.float32)
    for seed in range(2):
        y = np.full((WORLD, len(members), C), 7.0, np.float32)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        for d in members:
            np.testing.assert_array_equal(y[d], x[members, 0, :])   # domain rank i holds world rank i + 1's shard
        assert (y[0] == 7.0).all()
        assert all((w.bufs[m] == 0).all() for w in c.last_windows if w.nbytes == len(members) * 4 for m in members)
