"""The task graph an orchestration shapes: inferred edges, TaskIds and deps=, TaskId arrays, opt-outs,
dispatch predicates and dummy tasks — the cases the reference's "Shaping the Task Graph" tutorial and
its "Declaring an Edge" page walk through, written here as our own programs, each checked against
numpy under the deterministic schedule and several random ones."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.runtime import RunConfig

R, C = 64, 128
SCHEDULES = [RunConfig(), RunConfig(sim_schedule="random", sim_seed=1), RunConfig(sim_schedule="random", sim_seed=5)]


def _data(seed=0, shape=(R, C)):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


@functools.cache
def _compiled(builder, *args):
    """One compile per program variant, shared by the schedules a test runs it under."""
    return ir.compile(builder(*args), platform="a2a3sim")


# ---------------------------------------------------------------------------- pl.at / pl.spmd regions
@pl.jit
def _implicit_order(x: pl.Tensor, mid: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="producer"):
        mid[:] = pl.mul(x, 3.0)                 # writes mid
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer"):
        res[:] = pl.add(mid, x)                 # reads mid: ordered after the write, nothing declared
    return mid, res


@pl.jit
def _declared_order(x: pl.Tensor, mid: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="producer") as made:
        mid[:] = pl.mul(x, 3.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="consumer", deps=[made]) as used:
        res[:] = pl.add(mid, x)
    return mid, res


@pytest.mark.parametrize("kernel", [_implicit_order, _declared_order], ids=["inferred", "declared"])
@pytest.mark.parametrize("config", SCHEDULES, ids=["det", "rand1", "rand5"])
def test_an_edge_inferred_or_declared_gives_the_same_result(kernel, config):
    x = _data()
    mid, res = np.zeros_like(x), np.zeros_like(x)
    kernel(x, mid, res, config=config)
    np.testing.assert_allclose(res, 4 * x, rtol=1e-6)


@pl.jit
def _spmd_stages(x: pl.Tensor, mid: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
    with pl.spmd(4, name_hint="scale") as first:
        b = pl.tile.get_block_idx()
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [b * 16, 0], [16, C])
            pl.store(pl.mul(t, 2.0), [b * 16, 0], mid)
    with pl.spmd(4, name_hint="shift", deps=[first]) as second:
        b = pl.tile.get_block_idx()
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(mid, [b * 16, 0], [16, C])
            pl.store(pl.add(t, 1.0), [b * 16, 0], res)
    return res


@pytest.mark.parametrize("config", SCHEDULES, ids=["det", "rand1", "rand5"])
def test_spmd_regions_name_their_launch_with_as(config):
    x = _data(1)
    mid, res = np.zeros_like(x), np.zeros_like(x)
    _spmd_stages(x, mid, res, config=config)
    np.testing.assert_allclose(res, 2 * x + 1, rtol=1e-6)


def test_deps_on_a_bare_spmd_region_is_refused():
    with pytest.raises(PyptoError, match=r"pl.spmd\(\) does not accept 'deps=' here"):
        @pl.jit
        def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP) as t0:
                out[:] = pl.add(x, x)
            with pl.spmd(2, deps=[t0]):
                with pl.at(level=pl.Level.CORE_GROUP):
                    out[:] = pl.add(out, x)
            return out
        bad(_data(), np.zeros((R, C), np.float32))


def test_pl_at_has_no_predicate():
    with pytest.raises(PyptoError, match="pl.at has no predicate"):
        @pl.jit
        def bad(x: pl.Tensor, flags: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP, predicate=(flags[0] > 0)):
                out[:] = pl.add(x, x)
            return out
        bad(_data(), np.ones(8, np.int32), np.zeros((R, C), np.float32))


# ---------------------------------------------------------------------------- @pl.program: pl.submit
def _stage_program():
    @pl.program
    class Stages:
        @pl.function(type=pl.FunctionType.InCore)
        def double(self, x: pl.Tensor[[R, C], pl.FP32],
                   out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            t: pl.Tile[[R, C], pl.FP32] = pl.load(x, [0, 0], [R, C])
            ret = pl.store(pl.add(t, t), [0, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.InCore)
        def inc(self, x: pl.Tensor[[R, C], pl.FP32],
                out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            t: pl.Tile[[R, C], pl.FP32] = pl.load(x, [0, 0], [R, C])
            ret = pl.store(pl.add(t, 1.0), [0, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[R, C], pl.FP32],
                 out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            scratch = pl.create_tensor([R, C], dtype=pl.FP32)
            scratch, made = pl.submit(self.double, x, scratch)        # result and TaskId
            flat = pl.submit(self.inc, scratch, out, deps=[made])      # the flat tuple in one name
            return flat[0]

    return Stages


@pytest.mark.parametrize("config", SCHEDULES, ids=["det", "rand1", "rand5"])
def test_submit_returns_the_results_and_the_task_id(config):
    c = _compiled(_stage_program)
    x = _data(2)
    out = np.zeros_like(x)
    c(x, out, config=config)
    np.testing.assert_allclose(out, 2 * x + 1, rtol=1e-6)


def _fan_in_program(branches=4, rows=16):
    total = branches * rows

    @pl.program
    class FanIn:
        @pl.function(type=pl.FunctionType.InCore)
        def band(self, x: pl.Tensor[[total, C], pl.FP32], k: pl.Scalar[pl.INDEX],
                 part: pl.Out[pl.Tensor[[total, C], pl.FP32]]) -> pl.Tensor[[total, C], pl.FP32]:
            t: pl.Tile[[rows, C], pl.FP32] = pl.load(x, [k * rows, 0], [rows, C])
            ret = pl.store(pl.mul(t, 5.0), [k * rows, 0], part)
            return ret

        @pl.function(type=pl.FunctionType.InCore)
        def total_of(self, part: pl.Tensor[[total, C], pl.FP32],
                     out: pl.Out[pl.Tensor[[total, C], pl.FP32]]) -> pl.Tensor[[total, C], pl.FP32]:
            t: pl.Tile[[total, C], pl.FP32] = pl.load(part, [0, 0], [total, C])
            ret = pl.store(pl.sub(t, 1.0), [0, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[total, C], pl.FP32],
                 out: pl.Out[pl.Tensor[[total, C], pl.FP32]]) -> pl.Tensor[[total, C], pl.FP32]:
            part = pl.create_tensor([total, C], dtype=pl.FP32, manual_dep=True)    # edges by hand only
            tids = pl.array.create(branches, pl.TASK_ID)
            for k in pl.parallel(branches):
                part, tid = pl.submit(self.band, x, k, part)
                tids[k] = tid
            out, _ = pl.submit(self.total_of, part, out, deps=[tids])      # waits for every producer
            return out

    return FanIn


@pytest.mark.parametrize("config", SCHEDULES, ids=["det", "rand1", "rand5"])
def test_a_task_id_array_joins_a_loop_of_producers(config):
    c = _compiled(_fan_in_program)
    x = _data(3, (64, C))
    out = np.zeros_like(x)
    c(x, out, config=config)
    np.testing.assert_allclose(out, 5 * x - 1, rtol=1e-6)


def _gated_program(use_dummy: bool):
    @pl.program
    class Gated:
        @pl.function(type=pl.FunctionType.InCore)
        def gate(self, n: pl.Tensor[[1, 8], pl.INT32],
                 flags: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:
            t: pl.Tile[[1, 8], pl.INT32] = pl.load(n, [0, 0], [1, 8])
            ret = pl.store(t, [0, 0], flags)
            return ret

        @pl.function(type=pl.FunctionType.InCore)
        def work(self, x: pl.Tensor[[R, C], pl.FP32],
                 out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            b = pl.tile.get_block_idx()
            t: pl.Tile[[16, C], pl.FP32] = pl.load(x, [b * 16, 0], [16, C])
            ret = pl.store(pl.mul(t, 7.0), [b * 16, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[R, C], pl.FP32], n: pl.Tensor[[1, 8], pl.INT32],
                 out: pl.InOut[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            flags = pl.create_tensor([1, 8], dtype=pl.INT32)
            flags, g = pl.submit(self.gate, n, flags)
            if use_dummy:
                g = pl.system.task_dummy(deps=[g])
            out, _ = pl.spmd_submit(self.work, x, out, core_num=4, deps=[g], predicate=(flags[0, 3] > 0))
            return out

    return Gated


@pytest.mark.parametrize("use_dummy", [False, True], ids=["direct", "task_dummy"])
@pytest.mark.parametrize("config", SCHEDULES, ids=["det", "rand1", "rand5"])
def test_a_false_predicate_skips_the_task(use_dummy, config):
    c = _compiled(_gated_program, use_dummy)
    x = _data(4)
    on, off = np.array([[0, 0, 0, 2, 0, 0, 0, 0]], np.int32), np.zeros((1, 8), np.int32)
    out = np.full_like(x, -3.0)
    c(x, on, out, config=config)
    np.testing.assert_allclose(out, 7 * x, rtol=1e-6)        # every block of the launch ran
    out = np.full_like(x, -3.0)
    c(x, off, out, config=config)
    assert np.all(out == -3.0)                               # retired at dispatch: never ran, wrote nothing


def test_predicate_spellings_outside_the_one_comparison_are_refused():
    for bad in ("flags[0, 3] > n[0, 0]", "0 < flags[0, 3] < 8", "flags[0, 3] % 2 == 0", "flags[0, 3] > 1.5"):
        with pytest.raises(PyptoError, match="predicate="):
            _parse_orchestration(f"out, _ = pl.submit(self.k2, x, out, predicate=({bad}))")
    mirrored = _parse_orchestration("out, _ = pl.submit(self.k2, x, out, predicate=(0 < flags[0, 3]))")
    assert "pred_op='gt'" in mirrored.as_python()            # the tensor is always the operand


def _parse_orchestration(line: str):
    text = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{R}, {C}], pl.FP32], out: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]):
        t: pl.Tile[[{R}, {C}], pl.FP32] = pl.load(x, [0, 0], [{R}, {C}])
        pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, x: pl.Tensor[[{R}, {C}], pl.FP32],
           out: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        t: pl.Tile[[{R}, {C}], pl.FP32] = pl.load(x, [0, 0], [{R}, {C}])
        ret = pl.store(t, [0, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{R}, {C}], pl.FP32], flags: pl.Tensor[[1, 8], pl.INT32],
             n: pl.Tensor[[1, 8], pl.INT32], out: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]):
        {line}
        return out
'''
    return pl.parse(text)


def test_submit_mistakes_are_named():
    program = _parse_orchestration
    with pytest.raises(PyptoError, match=r"unpacks 1 result value\(s\) but kernel 'k' returns 0"):
        program("out, tid = pl.submit(self.k, x, out)")
    with pytest.raises(PyptoError, match="core_num=N"):
        program("tid = pl.spmd_submit(self.k, x, out)")
    with pytest.raises(PyptoError, match="deps= entries must be a TaskId variable"):
        program("tid = pl.submit(self.k, x, out, deps=[x])")
    with pytest.raises(PyptoError, match="first argument must be a self.<kernel>"):
        program("tid = pl.submit(x, out)")
    parsed = program("(tid,) = pl.submit(self.k, x, out)")       # a kernel with no result: only the TaskId
    assert "pl.system.task_id()" in parsed.as_python()


def test_submit_outside_a_kernel_body_is_a_pypto_error():
    with pytest.raises(PyptoError, match="only usable inside"):
        pl.submit(None)


# ---------------------------------------------------------------------------- opt-outs
N_BANDS, BAND = 4, 16


@pl.jit
def _narrow_opt_out(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(N_BANDS):
        with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[out]):      # this tensor, this task
            t = pl.load(a, [i * BAND, 0], [BAND, C])
            pl.store(pl.add(t, t), [i * BAND, 0], out)
    return out


@pl.jit
def _region_opt_out(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.manual_scope():                                               # every task inside
        for i in pl.range(N_BANDS):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(a, [i * BAND, 0], [BAND, C])
                pl.store(pl.add(t, t), [i * BAND, 0], out)
    return out


@pl.jit
def _mode_opt_out(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.scope(mode=pl.ScopeMode.MANUAL):
        for i in pl.range(N_BANDS):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(a, [i * BAND, 0], [BAND, C])
                pl.store(pl.add(t, t), [i * BAND, 0], out)
    return out


@pytest.mark.parametrize("kernel", [_narrow_opt_out, _region_opt_out, _mode_opt_out],
                         ids=["no_dep_args", "manual_scope", "scope_manual"])
@pytest.mark.parametrize("config", SCHEDULES, ids=["det", "rand1", "rand5"])
def test_opting_out_disjoint_bands_keeps_the_result(kernel, config):
    a = _data(5, (N_BANDS * BAND, C))
    out = np.zeros_like(a)
    kernel(a, out, config=config)
    np.testing.assert_allclose(out, 2 * a, rtol=1e-6)


def test_opt_outs_remove_the_inferred_edges():
    """The tasks of an opted-out loop wait for nothing, so a random schedule runs them out of order."""
    from pypto.runtime.sim import scheduler

    orders = {}
    real_add = scheduler.Run._add

    def spy(self, task, preds):
        orders.setdefault(kernel_name, []).append(len(preds))
        return real_add(self, task, preds)

    a = _data(6, (N_BANDS * BAND, C))
    scheduler.Run._add = spy
    try:
        for kernel_name, kernel in (("plain", _plain_bands), ("no_dep_args", _narrow_opt_out),
                                    ("manual_scope", _region_opt_out)):
            kernel(a, np.zeros_like(a))
    finally:
        scheduler.Run._add = real_add
    assert orders["plain"] == [0, 1, 1, 1]         # each band's task waits for the previous write of out
    assert orders["no_dep_args"] == [0, 0, 0, 0]
    assert orders["manual_scope"] == [0, 0, 0, 0]


@pl.jit
def _plain_bands(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(N_BANDS):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [i * BAND, 0], [BAND, C])
            pl.store(pl.add(t, t), [i * BAND, 0], out)
    return out


def test_manual_scopes_do_not_nest():
    with pytest.raises(PyptoError, match="may not nest"):
        @pl.jit
        def bad(a: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.manual_scope():
                with pl.manual_scope():
                    with pl.at(level=pl.Level.CORE_GROUP):
                        out[:] = pl.add(a, a)
            return out
        bad(_data(), np.zeros((R, C), np.float32))


def test_allow_early_resolve_is_accepted_and_changes_nothing():
    @pl.jit
    def hinted(x: pl.Tensor, mid: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=True) as made:
            mid[:] = pl.mul(x, 3.0)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[made]):
            res[:] = pl.add(mid, x)
        return mid, res

    x = _data(7)
    mid, res = np.zeros_like(x), np.zeros_like(x)
    hinted(x, mid, res)
    np.testing.assert_allclose(res, 4 * x, rtol=1e-6)


def test_the_for_form_of_spmd_takes_a_predicate_but_no_deps():
    @pl.jit
    def gated_blocks(x: pl.Tensor, flags: pl.Tensor, out: pl.InOut[pl.Tensor]):
        for b in pl.spmd(4, predicate=(flags[1] == 1)):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [b * 16, 0], [16, C])
                pl.store(pl.neg(t), [b * 16, 0], out)
        return out

    x = _data(8)
    out = np.zeros_like(x)
    gated_blocks(x, np.array([0, 1], np.int32), out)
    np.testing.assert_allclose(out, -x)
    out = np.zeros_like(x)
    gated_blocks(x, np.array([1, 0], np.int32), out)
    assert not out.any()
    with pytest.raises(PyptoError, match=r"pl.spmd\(\) does not accept 'deps=' here"):
        @pl.jit
        def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP) as t0:
                out[:] = pl.add(x, x)
            for b in pl.spmd(2, deps=[t0]):
                with pl.at(level=pl.Level.CORE_GROUP):
                    out[:] = pl.add(out, x)
            return out
        bad(x, np.zeros_like(x))


def test_a_recorded_timeline_takes_dummy_and_skipped_tasks(tmp_path):
    c = ir.compile(_gated_program(True), platform="a2a3sim", output_dir=tmp_path)
    x = _data(9)
    for flags in (np.ones((1, 8), np.int32), np.zeros((1, 8), np.int32)):
        c(x, flags, np.zeros_like(x), config=RunConfig(enable_chip_swimlane=1))
        assert c.last_timeline["swimlane"].exists()
