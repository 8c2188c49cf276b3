"""The race detector: an opt-out or a missing deps= that leaves two tasks touching the same bytes
unordered is a DataRaceError on every run — whatever the schedule — and a correct one is silent."""

from __future__ import annotations

import functools

import inspect

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import DataRaceError, PyptoError
from pypto.runtime import RunConfig

R, C = 64, 128
CONFIGS = [RunConfig()] + [RunConfig(sim_schedule="random", sim_seed=s) for s in (0, 1, 7)]
IDS = ["det"] + [f"seed{s}" for s in (0, 1, 7)]


def _line_of(fn, needle: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if needle in text)


@functools.cache
def _compiled(builder, *args):
    """One compile per program variant, shared by the schedules a test runs it under."""
    return ir.compile(builder(*args), platform="a2a3sim")


@pl.jit
def _deleted_edge(x: pl.Tensor, mid: pl.Out[pl.Tensor], res: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill_mid"):
        mid[:] = pl.mul(x, 2.0)                                          # writes mid
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="read_mid", no_dep_args=[mid]):   # the real edge, deleted
        res[:] = pl.add(mid, 1.0)                                        # reads mid
    return res


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_deleting_a_real_edge_raises_naming_both_tasks_and_lines(config):
    x = np.ones((R, C), np.float32)
    with pytest.raises(DataRaceError) as e:
        _deleted_edge(x, np.zeros_like(x), np.zeros_like(x), config=config)
    msg = str(e.value)
    first, second = _line_of(_deleted_edge, 'name_hint="fill_mid"'), _line_of(_deleted_edge, 'name_hint="read_mid"')
    assert "kernel fill_mid" in msg and "kernel read_mid" in msg
    assert f"test_race_detector.py:{first}:" in msg and f"test_race_detector.py:{second}:" in msg
    assert "buffer 'mid'" in msg and "elements [0:64, 0:128]" in msg
    assert "writes it" in msg and "reads it" in msg
    assert msg.startswith(f"{__file__}:{second}:")                      # located at the later task's line


def test_the_verdict_does_not_depend_on_the_schedule():
    x = np.ones((R, C), np.float32)
    messages = set()
    for config in CONFIGS:
        with pytest.raises(DataRaceError) as e:
            _deleted_edge(x, np.zeros_like(x), np.zeros_like(x), config=config)
        messages.add(str(e.value))
    assert len(messages) == 1


def test_the_check_can_be_turned_off():
    x = np.ones((R, C), np.float32)
    res = np.zeros_like(x)
    _deleted_edge(x, np.zeros_like(x), res, config=RunConfig(sim_race_check=False))   # the race goes unseen
    np.testing.assert_allclose(res, 3.0)             # (the deterministic order happens to be the right one)


BANDS, BAND = 4, 16


@pl.jit
def _disjoint_bands(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(BANDS):
        with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[out]):
            t = pl.load(a, [i * BAND, 0], [BAND, C])
            pl.store(pl.exp(t), [i * BAND, 0], out)
    return out


@pl.jit
def _overlapping_bands(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(BANDS - 1):
        with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[out]):
            t = pl.load(a, [i * BAND, 0], [2 * BAND, C])                # each band overlaps the next one
            pl.store(pl.exp(t), [i * BAND, 0], out)
    return out


@pl.jit
def _disjoint_columns(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for j in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[out]):       # interleaved in memory, disjoint in bytes
            t = pl.load(a, [0, j * 32], [R, 32])
            pl.store(pl.exp(t), [0, j * 32], out)
    return out


@pytest.mark.parametrize("kernel", [_disjoint_bands, _disjoint_columns], ids=["rows", "columns"])
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_a_correct_opt_out_raises_nothing(kernel, config):
    a = np.random.default_rng(0).uniform(-1, 1, (R, C)).astype(np.float32)
    out = np.zeros_like(a)
    kernel(a, out, config=config)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)


@pytest.mark.parametrize("config", CONFIGS[:3], ids=IDS[:3])
def test_overlapping_writes_opted_out_are_a_race_between_neighbours(config):
    a = np.zeros((R, C), np.float32)
    with pytest.raises(DataRaceError, match=r"elements \[16:32, 0:128\].*task 1 of the dispatch.*writes it.*task 2 of the dispatch.*writes it"):
        _overlapping_bands(a, np.zeros_like(a), config=config)


def _scratch_program(declare_edge: bool, manual: str):
    """Two hand-submitted tasks share a scratch tensor the runtime does not track (manual_dep / manual scope)."""

    @pl.program
    class Scratch:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, x: pl.Tensor[[R, C], pl.FP32],
                 tmp: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            t: pl.Tile[[R, C], pl.FP32] = pl.load(x, [0, 0], [R, C])
            ret = pl.store(pl.mul(t, 3.0), [0, 0], tmp)
            return ret

        @pl.function(type=pl.FunctionType.InCore)
        def drain(self, tmp: pl.Tensor[[R, C], pl.FP32],
                  out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            t: pl.Tile[[R, C], pl.FP32] = pl.load(tmp, [0, 0], [R, C])
            ret = pl.store(pl.add(t, 1.0), [0, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[R, C], pl.FP32],
                 out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            if manual == "tensor":
                tmp = pl.create_tensor([R, C], dtype=pl.FP32, manual_dep=True)
                tmp, filled = pl.submit(self.fill, x, tmp)
                if declare_edge:
                    out, _ = pl.submit(self.drain, tmp, out, deps=[filled])
                else:
                    out, _ = pl.submit(self.drain, tmp, out)
            else:
                tmp = pl.create_tensor([R, C], dtype=pl.FP32)
                with pl.manual_scope():
                    tmp, filled = pl.submit(self.fill, x, tmp)
                    if declare_edge:
                        out, _ = pl.submit(self.drain, tmp, out, deps=[filled])
                    else:
                        out, _ = pl.submit(self.drain, tmp, out)
            return out

    return Scratch


@pytest.mark.parametrize("manual", ["tensor", "scope"])
def test_a_missing_edge_on_a_shared_scratch_tensor_is_a_race(manual):
    racy = _compiled(_scratch_program, False, manual)
    fixed = _compiled(_scratch_program, True, manual)
    x = np.random.default_rng(1).standard_normal((R, C), dtype=np.float32)
    for config in CONFIGS[:4]:
        with pytest.raises(DataRaceError, match=r"buffer 'tmp'.*kernel fill.*writes it.*kernel drain.*reads it"):
            racy(x, np.zeros_like(x), config=config)
        out = np.zeros_like(x)
        fixed(x, out, config=config)
        np.testing.assert_allclose(out, 3 * x + 1, rtol=1e-6)


def test_a_data_race_error_is_a_pypto_error():
    assert issubclass(DataRaceError, PyptoError)
    import pypto
    assert pypto.DataRaceError is DataRaceError


def _no_dep_call_program(overlap: bool):
    """Plain kernel calls (no pl.submit) with pl.no_dep at an argument: bands of one output."""
    step = 16 if overlap else 32

    @pl.program
    class Bands:
        @pl.function(type=pl.FunctionType.InCore)
        def band(self, x: pl.Tensor[[R, C], pl.FP32], row: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            t: pl.Tile[[32, C], pl.FP32] = pl.load(x, [row, 0], [32, C])
            ret = pl.store(pl.add(t, 2.0), [row, 0], out)
            return ret

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[R, C], pl.FP32],
                 out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
            out = self.band(x, 0, pl.no_dep(out))
            out = self.band(x, step, pl.no_dep(out))
            return out

    return Bands


def test_no_dep_at_a_plain_kernel_call():
    x = np.random.default_rng(2).standard_normal((R, C), dtype=np.float32)
    ok = ir.compile(_no_dep_call_program(False), platform="a2a3sim")
    for config in CONFIGS[:3]:
        out = np.zeros_like(x)
        ok(x, out, config=config)
        np.testing.assert_allclose(out, x + 2, rtol=1e-6)
    racy = ir.compile(_no_dep_call_program(True), platform="a2a3sim")
    with pytest.raises(DataRaceError, match=r"elements \[16:32, 0:128\]"):
        racy(x, np.zeros_like(x))


def _chain_program(seed_line: str):
    text = f'''
import pypto.language as pl

@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, acc: pl.InOut[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        t: pl.Tile[[{R}, {C}], pl.FP32] = pl.load(acc, [0, 0], [{R}, {C}])
        ret = pl.store(pl.add(t, 1.0), [0, 0], acc)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, acc: pl.InOut[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        {seed_line}
        with pl.manual_scope():
            for i in pl.range(3):
                acc, prev = pl.submit(self.bump, acc, deps=[prev])
        return acc
'''
    return pl.parse(text)


def test_a_task_id_carried_through_a_loop_orders_the_chain():
    c = ir.compile(_chain_program("prev = pl.system.task_invalid()"), platform="a2a3sim")
    for config in CONFIGS[:3]:
        acc = np.zeros((R, C), np.float32)
        c(acc, config=config)
        np.testing.assert_allclose(acc, 3.0)
    with pytest.raises(PyptoError, match="seed it with prev = pl.system.task_invalid()"):
        _chain_program("prev = None")
