"""Allreduce on ND and partial-valid windows (seed 001): the packed 2-D `tensor.view`, the reference's
recipe shapes (required ops, For / If counts, chunk steps), the rejections, and numpy equality on the
multi-rank simulator under random schedules."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.expr import BinaryExpr, Call, ConstInt
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt
from pypto.ir.visitor import collect
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.runtime import RunConfig

NP_REDUCE = {pld.ReduceOp.Sum: np.sum, pld.ReduceOp.Max: np.max, pld.ReduceOp.Min: np.min, pld.ReduceOp.Prod: np.prod}
REDUCE_OPS = {pld.ReduceOp.Sum: "tile.add", pld.ReduceOp.Max: "tile.maximum", pld.ReduceOp.Min: "tile.minimum",
              pld.ReduceOp.Prod: "tile.mul"}


def _window(shape, dtype, valid=None, layout=None, stride=None):
    if valid is None and layout is None and stride is None:
        return pld.DistributedTensor[shape, dtype]
    kw = {}
    if valid is not None:
        kw["valid_shape"] = valid
    if layout is not None:
        kw["layout"] = layout
    if stride is not None:
        kw["stride"] = stride
    return pld.DistributedTensor[shape, dtype, pl.TensorView(**kw)]


def step(shape, signal_shape=(2, 1), *, valid=None, mode="mesh", op=pld.ReduceOp.Sum, dtype=pl.FP32, **view):
    """One InCore allreduce on a window of `shape` (the reference tests' `reduce_step` shape)."""
    T = _window(list(shape), dtype, valid, **view)
    S = pld.DistributedTensor[list(signal_shape), pl.INT32]

    @pl.program
    class Step:
        @pl.function(type=pl.FunctionType.InCore)
        def reduce_step(self, data: pl.InOut[T], signal: pl.InOut[S]) -> T:
            data = pld.tensor.allreduce(data, signal, op=op, mode=mode)
            return data
    return Step


def lowered(prog):
    body = lower_composite_ops()(prog).get_function("reduce_step").body
    calls = collect(body, lambda n: isinstance(n, Call) and not n.is_function_call())
    fors = collect(body, lambda n: isinstance(n, ForStmt))
    ifs = collect(body, lambda n: isinstance(n, IfStmt))
    return calls, fors, ifs


def _ints(tup):
    return [e.value for e in tup.elements]


# ---------------------------------------------------------------------- recipe shape (reference tests §1.1 / §2.1)
MESH_REQUIRED = {"pld.get_comm_ctx", "pld.nranks", "pld.rank", "pld.system.notify", "pld.system.wait",
                 "pld.tile.remote_load", "tile.fillpad_inplace", "tile.add", "tile.load", "tile.set_validshape",
                 "tile.store"}


@pytest.mark.parametrize("size", [1, 3, 17, 4096, 4097, 65537])
def test_mesh_recipe_shape_pinned_by_the_reference(size):
    calls, fors, ifs = lowered(step([1, size]))
    names = {c.op.name for c in calls}
    assert MESH_REQUIRED <= names and "pld.tensor.allreduce" not in names
    assert (len(fors), len(ifs)) == (7, 6)
    chunk = min(4096, -(-size // 8) * 8)
    loop = next(f for f in fors if isinstance(f.stop, ConstInt) and f.stop.value == size)
    assert (loop.start.value, loop.step.value) == (0, chunk)
    remote = [c for c in calls if c.op.name == "pld.tile.remote_load"]
    assert len(remote) == 1 and len(remote[0].args) == 5
    assert _ints(remote[0].args[3]) == [1, chunk]
    valid_cols = remote[0].args[4].elements[1]          # the tail extent min(CH, SIZE - c0), written inline
    assert isinstance(valid_cols, BinaryExpr) and valid_cols.op == "min"
    local = next(c for c in calls if c.op.name == "tile.load" and len(c.args) == 4
                 and isinstance(c.args[3].elements[1], BinaryExpr))
    assert ir.structural_equal(local.args[3], remote[0].args[4])
    assert all(c.kwargs["cmp"] is pld.WaitCmp.Ge for c in calls if c.op.name == "pld.system.wait")
    assert all(c.kwargs["op"] is pld.NotifyOp.AtomicAdd for c in calls if c.op.name == "pld.system.notify")


@pytest.mark.parametrize("op", list(REDUCE_OPS), ids=lambda o: o.name)
def test_each_reduce_op_maps_to_exactly_one_tile_op(op):
    names = {c.op.name for c in lowered(step([1, 64], op=op))[0]}
    assert REDUCE_OPS[op] in names
    assert not (set(REDUCE_OPS.values()) - {REDUCE_OPS[op]}) & names


def test_nd_target_is_viewed_as_one_packed_row():
    calls, fors, ifs = lowered(step([2, 3, 4]))
    views = [c for c in calls if c.op.name == "tensor.view"]
    assert len(views) == 1 and _ints(views[0].args[1]) == [1, 24] and len(views[0].args) == 2
    assert views[0].type.tensor_view is None and (len(fors), len(ifs)) == (7, 6)
    moves = [c for c in calls if c.op.name in ("tile.load", "pld.tile.remote_load", "tile.store")]
    window_of = {"tile.load": 0, "pld.tile.remote_load": 0, "tile.store": 2}
    assert len(moves) == 3 and all([d.value for d in c.args[window_of[c.op.name]].type.shape] == [1, 24] for c in moves)


def test_partial_valid_target_keeps_one_rectangle_and_two_barriers():
    calls, fors, ifs = lowered(step([2, 3, 4], valid=[1, 3, 2]))
    view = next(c for c in calls if c.op.name == "tensor.view")
    assert _ints(view.args[1]) == [6, 4] and _ints(view.args[2]) == [3, 2]
    assert [e.value for e in view.type.tensor_view.valid_shape] == [3, 2]
    load = next(c for c in calls if c.op.name == "tile.load")
    assert _ints(load.args[2]) == [3, 2]
    waits = [c.args[2].value for c in calls if c.op.name == "pld.system.wait"]
    assert waits == [1, 2]
    epilogue = [c for c in calls if c.op.name == "pld.system.notify"][-1]
    assert epilogue.args[3].value == -2
    assert "tile.set_validshape" not in {c.op.name for c in calls}


@pytest.mark.parametrize("kwargs,match", [
    (dict(shape=[128, 64], valid=[100, 64]), "must fit within one 16384-byte mesh chunk"),
    (dict(shape=[2, 3, 4], valid=[2, 2, 4]), "not contiguous after collapsing"),
    (dict(shape=[4, 64], stride=[128, 1]), "strided target"),
    (dict(shape=[4, 64], valid=[2, 64], layout=pl.TensorLayout.DN), "DN partial view"),
])
def test_unrepresentable_targets_are_rejected(kwargs, match):
    shape = kwargs.pop("shape")
    with pytest.raises(UnsupportedError, match=match):
        lower_composite_ops()(step(shape, **kwargs))


@pytest.mark.parametrize("mode", ["mesh", "ring"])
def test_an_explicit_row_major_stride_is_packed_not_strided(mode):
    """[12, 4, 1] on [2, 3, 4] is exactly the contiguous packing: the recipe is the unstrided one."""
    signal = (2, 2) if mode == "ring" else (2, 1)
    plain, _, _ = lowered(step([2, 3, 4], signal, mode=mode))
    packed, fors, ifs = lowered(step([2, 3, 4], signal, mode=mode, stride=[12, 4, 1]))
    assert [c.op.name for c in packed] == [c.op.name for c in plain]
    view = next(c for c in packed if c.op.name == "tensor.view")
    assert _ints(view.args[1]) == [1, 24]
    with pytest.raises(UnsupportedError, match="strided target"):
        lower_composite_ops()(step([2, 3, 4], signal, mode=mode, stride=[16, 4, 1]))   # a padded row: strided


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_packed_stride_allreduce_matches_numpy(platform):
    n, shape = 2, (2, 3, 4)
    c = ir.compile(nd_allreduce(n, shape, pl.FP32, pld.ReduceOp.Sum, stride=[12, 4, 1]), platform=platform,
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    x = np.random.default_rng(7).uniform(0.5, 2.0, (n,) + shape).astype(np.float32)
    y = np.zeros_like(x)
    c(x, y)
    np.testing.assert_allclose(y, _expected(x, pld.ReduceOp.Sum, None), rtol=1e-5)


def test_ring_recipe_shape_at_two_ranks():
    """14 For / 13 If at P = 2 (reference tests §2.1); the seed-001 ring stages pushes through one Vec tile
    narrowed per transfer by tile.set_validshape."""
    calls, fors, ifs = lowered(step([1, 64], (2, 2), mode="ring"))
    names = {c.op.name for c in calls}
    assert (len(fors), len(ifs)) == (14, 13)
    assert {"pld.tile.put", "tile.set_validshape", "tile.create", "tensor.view"} <= names
    assert "pld.tile.remote_load" not in names
    puts = [c for c in calls if c.op.name == "pld.tile.put"]
    stages = [c for c in calls if c.op.name == "tile.set_validshape"]
    assert len(puts) == 2 and len(stages) == 2
    assert all(list(p.args[3].type.tile_view.valid_shape)[1] is s.args[2] for p, s in zip(puts, stages))


@pytest.mark.parametrize("size", [1, 3, 17, 8193, 65537])
@pytest.mark.parametrize("P", [2, 4])
def test_ring_counts_and_stage_width_over_lengths(size, P):
    """The recipe's structure does not depend on the length or the rank count (both are loop bounds);
    the staging tile is one 32-byte-aligned row of at most 16 KiB."""
    calls, fors, ifs = lowered(step([1, size], (2 * (P - 1), P), mode="ring"))
    assert (len(fors), len(ifs)) == (14, 13)
    stage = next(c for c in calls if c.op.name == "tile.create")
    rows, cols = _ints(stage.args[0])
    assert rows == 1 and cols * 4 <= 16 * 1024 and (cols * 4) % 32 == 0 and cols == min(4096, -(-size // 8) * 8)


def test_ring_partial_target_needs_a_linear_prefix():
    calls, _, _ = lowered(step([4, 8], (2, 2), valid=[1, 5], mode="ring"))
    view = next(c for c in calls if c.op.name == "tensor.view")
    assert _ints(view.args[1]) == [1, 32] and _ints(view.args[2]) == [1, 5]
    with pytest.raises(UnsupportedError, match="not a contiguous row-major prefix"):
        lower_composite_ops()(step([4, 8], (2, 2), valid=[2, 5], mode="ring"))


def test_lowering_is_idempotent_on_views():
    from pypto.ir.equality import structural_equal
    for prog in (step([2, 3, 4]), step([2, 3, 4], valid=[1, 3, 2]), step([2, 8], (2, 2), mode="ring")):
        once = lower_composite_ops()(prog)
        assert structural_equal(lower_composite_ops()(once), once)


# ---------------------------------------------------------------------- numpy on the multi-rank simulator
def nd_allreduce(N, shape, dtype, op, *, valid=None, mode="mesh", stride=None):
    """x[r] staged into an ND window (optionally typed with a partial valid_shape or an explicit stride), one
    allreduce, y[r] = window."""
    SR, SC = (2 * (N - 1), N) if mode == "ring" else (N, 1)
    W = _window(list(shape), dtype)
    V = _window(list(shape), dtype, valid, stride=stride)
    zeros = [0] * len(shape)

    @pl.program
    class NdAllReduce:
        @pl.function(type=pl.FunctionType.InCore)
        def stage(self, x: pl.Tensor[shape, dtype], data: pl.InOut[W]) -> W:
            t = pl.load(x, zeros, shape)
            data = pl.store(t, zeros, data)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def reduce(self, data: pl.InOut[V], signal: pl.InOut[pld.DistributedTensor[[SR, SC], pl.INT32]]) -> V:
            data = pld.tensor.allreduce(data, signal, op=op, mode=mode)
            return data

        @pl.function(type=pl.FunctionType.InCore)
        def unstage(self, data: W, y: pl.Out[pl.Tensor[shape, dtype]]) -> pl.Tensor[shape, dtype]:
            u = pl.load(data, zeros, shape)
            y = pl.store(u, zeros, y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, x: pl.Tensor[shape, dtype], y: pl.Out[pl.Tensor[shape, dtype]], data: W,
                     signal: pld.DistributedTensor[[SR, SC], pl.INT32]) -> pl.Tensor[shape, dtype]:
            data = self.stage(x, data)
            data = self.reduce(data, signal)
            y = self.unstage(data, y)
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[N] + list(shape), dtype], y: pl.Out[pl.Tensor[[N] + list(shape), dtype]]):
            data_buf = pld.alloc_window_buffer(list(shape), dtype=dtype)
            signal_buf = pld.alloc_window_buffer([SR, SC], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, list(shape), dtype=dtype)
                signal = pld.window(signal_buf, [SR, SC], dtype=pl.INT32)
                self.per_rank(x[r], y[r], data, signal, device=r)

    return NdAllReduce


def _expected(x, op, valid):
    region = (slice(None),) + tuple(slice(0, v) for v in (valid or x.shape[1:]))
    out = x.astype(np.float64).copy()
    red = NP_REDUCE[op](out[region], axis=0, keepdims=True)
    out[region] = np.broadcast_to(red, out[region].shape)
    return out


@pytest.mark.parametrize("n,shape,valid,mode,op,dtype", [
    (2, (2, 3, 4), None, "mesh", pld.ReduceOp.Sum, pl.FP32),
    (3, (2, 3, 8), [1, 3, 4], "mesh", pld.ReduceOp.Max, pl.FP32),
    (4, (4, 16), [3, 8], "mesh", pld.ReduceOp.Prod, pl.FP16),
    (3, (2, 5, 8), [1, 3, 8], "ring", pld.ReduceOp.Min, pl.FP32),
], ids=["mesh-nd-2r", "mesh-partial3d-3r", "mesh-partial2d-fp16-4r", "ring-prefix3d-3r"])
def test_nd_and_partial_allreduce_match_numpy_under_random_schedules(n, shape, valid, mode, op, dtype):
    c = ir.compile(nd_allreduce(n, shape, dtype, op, valid=valid, mode=mode), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    npdt = np.float32 if dtype is pl.FP32 else np.float16
    for seed in range(2):
        x = np.random.default_rng(seed).uniform(0.8, 1.25, (n,) + tuple(shape)).astype(npdt)
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        tol = 1e-5 if dtype is pl.FP32 else 2e-2
        np.testing.assert_allclose(y.astype(np.float64), _expected(x, op, valid), rtol=tol, atol=tol)


def test_ring_without_its_push_done_barrier_races_under_random_schedules(monkeypatch):
    """A test-only broken ring: skipping the push-done barrier lets a rank fold its receive slot before the
    left neighbour's push lands; the simulator shows the wrong sum (here in every schedule tried: a rank
    folds right after its own push)."""
    from pypto.passes.lower_composite_ops import collective_ring as ring
    real, calls = ring._row_barrier, []

    def ready_only(b, h, signal, row, generation):
        calls.append(generation)
        if len(calls) % 2:                      # every subchunk emits ready, then push-done: keep the ready one
            real(b, h, signal, row, generation)
    monkeypatch.setattr(ring, "_row_barrier", ready_only)
    n, shape = 4, (1, 64)
    c = ir.compile(nd_allreduce(n, shape, pl.FP32, pld.ReduceOp.Sum, mode="ring"), platform="a2a3sim",
                   distributed_config=DistributedConfig(device_ids=list(range(n))))
    wrong = 0
    for seed in range(10):
        x = np.random.default_rng(seed).uniform(0.8, 1.25, (n,) + shape).astype(np.float32)
        y = np.zeros_like(x)
        c(x, y, config=RunConfig(sim_schedule="random", sim_seed=seed))
        wrong += not np.allclose(y, _expected(x, pld.ReduceOp.Sum, None), rtol=1e-5, atol=1e-5)
    assert wrong > 0, "the missing barrier must show"


def test_a_dn_target_with_its_explicit_stride_is_rejected_for_its_layout():
    with pytest.raises(UnsupportedError, match="DN target cannot be walked as a row-major"):
        lower_composite_ops()(step([2, 3, 4], stride=[12, 1, 3], layout=pl.TensorLayout.DN))
