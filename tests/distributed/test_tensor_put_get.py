"""pld.tensor.put / pld.tensor.get (tensor-level one-sided copies) and reduce_scatter rows longer than one
16 KiB UB chunk: the lowered recipes and numpy equality on the multi-rank simulator."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import PyptoError, UnsupportedError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import Call
from pypto.ir.stmt import ForStmt, IfStmt
from pypto.ir.visitor import collect
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.runtime import RunConfig

from tests.distributed.programs import collective




def put_program(N, shape, *, region=None, atomic=pld.AtomicType.None_, everyone=False, **chunking):
    """Rank r puts x[r] into rank (r + 1) % N's window (or, with everyone=True, into every rank's window);
    a barrier; the window is surfaced as y[r]. `region` = (dst_offsets, src_offsets, shape)."""
    zeros = [0] * len(shape)

    @pl.program
    class Put:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[shape, pl.FP32], y: pl.Out[pl.Tensor[shape, pl.FP32]],
                 data: pl.InOut[pld.DistributedTensor[shape, pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[shape, pl.FP32]:
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            n = pld.nranks(ctx)
            if everyone:
                for p in pl.range(N):
                    if region:
                        pld.tensor.put(data, p, x, region[0], region[1], region[2], atomic=atomic, **chunking)
                    else:
                        pld.tensor.put(data, p, x, atomic=atomic, **chunking)
            else:
                pld.tensor.put(data, (me + 1) % n, x, atomic=atomic, **chunking)
            signal = pld.tensor.barrier(signal)
            u = pl.load(data, zeros, shape)
            y = pl.store(u, zeros, y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[shape, pl.FP32], y: pl.Out[pl.Tensor[shape, pl.FP32]],
                     data: pld.DistributedTensor[shape, pl.FP32],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[shape, pl.FP32]:
            y = self.kern(x, y, data, signal)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N] + list(shape), pl.FP32], y: pl.Out[pl.Tensor[[N] + list(shape), pl.FP32]]):
            data_buf = pld.alloc_window_buffer(list(shape), dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, list(shape), dtype=pl.FP32)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], data, signal, device=r)

    return Put


def get_program(N, shape, **chunking):
    """Rank r stages x[r] in its window; a barrier; rank r gets rank (r + 1) % N's window into y[r]."""
    zeros = [0] * len(shape)

    @pl.program
    class Get:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: pl.Tensor[shape, pl.FP32], y: pl.Out[pl.Tensor[shape, pl.FP32]],
                 data: pl.InOut[pld.DistributedTensor[shape, pl.FP32]],
                 signal: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]]) -> pl.Tensor[shape, pl.FP32]:
            t = pl.load(x, zeros, shape)
            data = pl.store(t, zeros, data)
            signal = pld.tensor.barrier(signal)
            ctx = pld.get_comm_ctx(data)
            me = pld.rank(ctx)
            n = pld.nranks(ctx)
            pld.tensor.get(y, (me + 1) % n, data, **chunking)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[shape, pl.FP32], y: pl.Out[pl.Tensor[shape, pl.FP32]],
                     data: pld.DistributedTensor[shape, pl.FP32],
                     signal: pld.DistributedTensor[[N, 1], pl.INT32]) -> pl.Tensor[shape, pl.FP32]:
            y = self.kern(x, y, data, signal)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N] + list(shape), pl.FP32], y: pl.Out[pl.Tensor[[N] + list(shape), pl.FP32]]):
            data_buf = pld.alloc_window_buffer(list(shape), dtype=pl.FP32)
            signal_buf = pld.alloc_window_buffer([N, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, list(shape), dtype=pl.FP32)
                signal = pld.window(signal_buf, [N, 1], dtype=pl.INT32)
                self.per_rank(x[r], y[r], data, signal, device=r)

    return Get


def _run(prog, N, x, seeds=range(2)):
    c = ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(N))))
    outs = []
    for seed in seeds:
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        outs.append(y)
    return outs


def _kernel_calls(prog):
    body = lower_composite_ops()(prog).get_function("kern").body
    return body, [c for c in collect(body, lambda n: isinstance(n, Call) and not n.is_function_call())]


# ---------------------------------------------------------------------- recipes
def test_put_lowers_to_a_staging_tile_and_chunked_tile_puts():
    body, calls = _kernel_calls(put_program(2, [8, 40], chunk_rows=3, chunk_cols=16))
    names = [c.op.name for c in calls]
    assert "pld.tensor.put" not in names and names.count("pld.tile.put") == 1
    create = next(c for c in calls if c.op.name == "tile.create")
    assert [e.value for e in create.args[0].elements] == [3, 16]
    loops = [(f.stop.value, f.step.value) for f in collect(body, lambda n: isinstance(n, ForStmt))
             if getattr(f.stop, "value", None) in (8, 40)]
    assert loops == [(8, 3), (40, 16)]
    put = next(c for c in calls if c.op.name == "pld.tile.put")
    stage = put.args[3]
    assert stage.type.tile_view.valid_shape[0] is put.args[6].elements[0]


def test_pipeline_alternates_two_staging_tiles():
    body, calls = _kernel_calls(put_program(2, [8, 40], chunk_rows=4, chunk_cols=16, pipeline=True))
    assert [c.op.name for c in calls].count("tile.create") == 2
    puts = [c for c in calls if c.op.name == "pld.tile.put"]
    sources = {c.args[0] for c in calls if c.op.name == "tile.set_validshape"}
    assert len(puts) == 2 and len({p.args[3] for p in puts}) == 2 and len(sources) == 2
    assert len(collect(body, lambda n: isinstance(n, IfStmt))) >= 1


def test_default_stage_is_bounded_to_one_ub_chunk():
    _, calls = _kernel_calls(get_program(2, [64, 512]))
    create = next(c for c in calls if c.op.name == "tile.create")
    assert [e.value for e in create.args[0].elements] == [8, 512]          # 8 * 512 * 4 B = 16 KiB
    assert any(c.op.name == "pld.tile.get" for c in calls)


def test_put_get_argument_errors():
    with pytest.raises(PyptoError, match="pipeline=True needs chunk_rows and chunk_cols"):
        put_program(2, [8, 16], pipeline=True)
    with pytest.raises(PyptoError, match="dst_offsets, src_offsets and shape go together"):
        put_program(2, [8, 16], everyone=True, region=([0, 0], [0, 0], None))


def test_a_rank3_sub_region_loops_over_its_leading_dim():
    prog = put_program(2, [2, 3, 8], region=([1, 0, 0], [0, 1, 0], [1, 2, 8]), everyone=True)
    body, calls = _kernel_calls(prog)
    puts = [c for c in calls if c.op.name == "pld.tile.put"]
    assert puts and all(len(p.args[4].elements) == 3 and p.args[6].elements[0].value == 1 for p in puts)
    assert any(getattr(f.stop, "value", None) == 1 and f.loop_var.name_hint.startswith("i0")
               for f in collect(body, lambda n: isinstance(n, ForStmt)))


# ---------------------------------------------------------------------- numpy on the simulator
def test_put_to_the_right_neighbour_with_ragged_pipelined_chunks():
    N, shape = 3, [8, 40]
    x = np.random.default_rng(0).standard_normal((N, *shape)).astype(np.float32)
    for y in _run(put_program(N, shape, chunk_rows=3, chunk_cols=16, pipeline=True), N, x):
        np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))


def test_atomic_put_of_a_region_into_every_rank_sums():
    N, shape = 4, [4, 32]
    region = ([2, 0], [0, 8], [2, 16])
    x = np.random.default_rng(1).standard_normal((N, *shape)).astype(np.float32)
    prog = put_program(N, shape, region=region, atomic=pld.AtomicType.Add, everyone=True, chunk_cols=8)
    for y in _run(prog, N, x):
        want = np.zeros((N, *shape), np.float64)
        want[:, 2:4, 0:16] = x[:, 0:2, 8:24].astype(np.float64).sum(axis=0)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape, region, chunking", [
    ([3, 4, 32], ([1, 2, 0], [0, 0, 8], [2, 2, 16]), {"chunk_cols": 8}),
    ([2, 2, 3, 16], ([0, 1, 1, 0], [0, 0, 0, 4], [2, 1, 2, 12]),
     {"chunk_rows": 1, "chunk_cols": 8, "pipeline": True})])
def test_atomic_put_of_a_rank3_and_rank4_region_matches_numpy(shape, region, chunking):
    N = 3
    x = np.random.default_rng(len(shape)).standard_normal((N, *shape)).astype(np.float32)
    prog = put_program(N, shape, region=region, atomic=pld.AtomicType.Add, everyone=True, **chunking)
    dst = tuple(slice(o, o + e) for o, e in zip(region[0], region[2]))
    src = tuple(slice(o, o + e) for o, e in zip(region[1], region[2]))
    want = np.zeros((N, *shape), np.float64)
    want[(slice(None),) + dst] = x[(slice(None),) + src].astype(np.float64).sum(axis=0)
    for y in _run(prog, N, x):
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_get_of_a_rank3_window_from_the_left_neighbour():
    N, shape = 3, [2, 3, 8]
    x = np.random.default_rng(2).standard_normal((N, *shape)).astype(np.float32)
    for y in _run(get_program(N, shape), N, x, seeds=[4]):
        np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))


# ---------------------------------------------------------------------- reduce_scatter rows beyond one UB chunk
def test_reduce_scatter_chunks_long_rows():
    N, SIZE = 3, 4104                    # 4096 + a ragged 8-element tail
    prog = collective("reduce_scatter", N, SIZE, op=pld.ReduceOp.Max)
    kern = lower_composite_ops()(prog).get_function("kern")
    waits = [c for c in collect(kern.body, lambda n: isinstance(n, Call) and not n.is_function_call())
             if c.op.name == "pld.system.wait"]
    assert any(not hasattr(w.args[2], "value") for w in waits)          # per-chunk generation 2 + c0 // CH
    chunk_loop = [f for f in collect(kern.body, lambda n: isinstance(n, ForStmt))
                  if getattr(f.stop, "value", None) == SIZE]
    assert len(chunk_loop) == 1 and chunk_loop[0].step.value == 4096
    c = ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.random.default_rng(3).standard_normal((N, N, SIZE)).astype(np.float32)
    for seed in [7]:
        y = np.zeros((N, N, SIZE), np.float32)
        sig = np.full((N, N, 1), -1, np.int32)
        c(x, y, sig, config=RunConfig(sim_schedule="random", sim_seed=seed))
        assert (sig == 0).all(), "1 + chunk_count credits retired"
        for r in range(N):
            np.testing.assert_array_equal(y[r, r], x[:, r].max(axis=0))
            others = [q for q in range(N) if q != r]
            np.testing.assert_array_equal(y[r, others], x[r, others])


def test_put_get_lowering_is_idempotent():
    from pypto.ir.equality import structural_equal
    for prog in (put_program(2, [8, 40], chunk_rows=4, chunk_cols=16, pipeline=True), get_program(2, [2, 3, 8])):
        once = lower_composite_ops()(prog)
        assert structural_equal(lower_composite_ops()(once), once)
