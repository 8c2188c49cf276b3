"""allgather, reduce_scatter, broadcast, all_to_all and barrier on 4 simulated ranks against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.stmt import ForStmt, IfStmt
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig

from tests.distributed.programs import builtin_barrier_shift, collective

N, SIZE = 4, 64
NP_REDUCE = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min, pld.ReduceOp.Prod: np.prod}


def build(kind, **kw):
    return ir.compile(collective(kind, N, SIZE, **kw), platform="a2a3sim",
                      distributed_config=DistributedConfig(device_ids=list(range(N))))


def run(c, x, seeds=range(3)):
    outs = []
    for seed in seeds:
        y = np.zeros((N, N, SIZE), np.float32)
        sig = np.full((N, N, 1), -1, np.int32)
        c(x, y, sig, config=RunConfig(sim_schedule="random", sim_seed=seed))
        assert (sig == 0).all(), "the epilogues leave the signal at zero"
        outs.append(y)
    return outs


def test_allgather_push_rows():
    x = np.random.default_rng(0).standard_normal((N, 1, SIZE)).astype(np.float32)
    for y in run(build("allgather"), x):
        for r in range(N):
            np.testing.assert_array_equal(y[r], x[:, 0, :])


def test_all_to_all_transposes_rows_across_ranks():
    x = np.random.default_rng(1).standard_normal((N, N, SIZE)).astype(np.float32)
    for y in run(build("all_to_all"), x):
        np.testing.assert_array_equal(y, x.transpose(1, 0, 2))


@pytest.mark.parametrize("op", list(NP_REDUCE), ids=lambda o: o.name)
def test_reduce_scatter_row_r_holds_the_reduction(op):
    x = np.random.default_rng(2).uniform(0.5, 1.5, (N, N, SIZE)).astype(np.float32)
    red = NP_REDUCE[op](x.astype(np.float64), axis=0)
    for y in run(build("reduce_scatter", op=op), x):
        for r in range(N):
            np.testing.assert_allclose(y[r, r], red[r], rtol=1e-5)
            others = [q for q in range(N) if q != r]
            np.testing.assert_array_equal(y[r, others], x[r, others])


@pytest.mark.parametrize("root", [0, 2])
def test_broadcast_from_root(root):
    x = np.random.default_rng(3).standard_normal((N, N, SIZE)).astype(np.float32)
    for y in run(build("broadcast", root=root), x):
        for r in range(N):
            np.testing.assert_array_equal(y[r], x[root])


@pytest.mark.parametrize("n", [2, 4])
def test_builtin_barrier_orders_remote_load(n):
    c = ir.compile(builtin_barrier_shift(n), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    x = np.random.default_rng(4).standard_normal((n, 1, 64)).astype(np.float32)
    for seed in range(5):
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))


def test_missing_barrier_lets_remote_load_race():
    n = 4
    c = ir.compile(builtin_barrier_shift(n, use_barrier=False), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    x = np.random.default_rng(5).standard_normal((n, 1, 64)).astype(np.float32)
    wrong = 0
    for seed in range(10):
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        wrong += not np.array_equal(y, np.roll(x, -1, axis=0))
    assert wrong > 0


@pytest.mark.parametrize("kind,fors,ifs", [("allgather", 4, 3), ("broadcast", 3, 3), ("reduce_scatter", 6, 6),
                                           ("all_to_all", 4, 3)])
def test_recipe_loop_and_if_counts(kind, fors, ifs):
    from pypto.passes.lower_composite_ops import lower_composite_ops
    prog = collective(kind, N, SIZE)
    kern = lower_composite_ops()(prog).get_function("kern")
    before = prog.get_function("kern")
    n_for = len(collect(kern.body, lambda s: isinstance(s, ForStmt))) - len(collect(before.body, lambda s: isinstance(s, ForStmt)))
    n_if = len(collect(kern.body, lambda s: isinstance(s, IfStmt))) - len(collect(before.body, lambda s: isinstance(s, IfStmt)))
    assert (n_for, n_if) == (fors + 3, ifs + 3)        # + the closing pld.tensor.barrier's 3 / 3


def test_all_to_all_v_variable_rows_with_zero_row_edges():
    from tests.distributed.programs import all_to_all_v
    M, C = 3, 8
    c = ir.compile(all_to_all_v(N, M, C), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(N))))
    rng = np.random.default_rng(6)
    x = rng.standard_normal((N, N * M, C)).astype(np.float32)
    counts = rng.integers(-1, M + 2, (N, N, 1)).astype(np.int32)      # negatives and overflows get clamped
    counts[0, 1, 0] = 0                                                 # a zero-row edge
    for seed in range(3):
        y = np.zeros((N, N * M, C), np.float32)
        rc = np.full((N, N, 1), -5, np.int32)
        c(x, counts, y, rc, config=RunConfig(sim_schedule="random", sim_seed=seed))
        for r in range(N):
            for s in range(N):
                cnt = int(np.clip(counts[s, r, 0], 0, M))
                assert rc[r, s, 0] == cnt
                np.testing.assert_array_equal(y[r, s * M:s * M + cnt], x[s, r * M:r * M + cnt])
                assert (y[r, s * M + cnt:(s + 1) * M] == 0).all()          # rows nobody sent stay untouched


def test_all_to_all_v_push_loop_reads_counts_at_run_time():
    from pypto.ir.expr import Call, ConstInt
    from pypto.passes.lower_composite_ops import lower_composite_ops
    from tests.distributed.programs import all_to_all_v
    kern = lower_composite_ops()(all_to_all_v(N, 3, 8)).get_function("kern")
    reads = [c for c in collect(kern.body, lambda n: isinstance(n, Call) and not n.is_function_call())
             if c.op.name == "tensor.read"]
    assert any(r.args[0].name_hint == "counts" for r in reads)
    assert not any(isinstance(f.stop, ConstInt) and f.stop.value == 3 for f in collect(kern.body, lambda s: isinstance(s, ForStmt)))
