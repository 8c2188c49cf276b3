"""A whole fused loop that is the first and only writer of an Out buffer leaves its result pending, and
write-back computes it straight into the caller's array (out_coverage.first_store, HostArgs.write_back).
What the caller sees must be exactly what computing into the private buffer and copying gives: the same
bits, the same failure behaviour (nothing changed), and the private-buffer route whenever writing
straight through could read a changed operand or would need a dtype conversion."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import RunConfig
from pypto.runtime.sim import out_coverage

ROWS, COLS, BLOCK = 32, 128, 8


@pl.jit
def add_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
    return c


@pl.jit
def sum_and_product(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
    with pl.at(level=pl.Level.CORE_GROUP):
        for j in pl.range(rows // BLOCK):
            ua = pl.load(a, [j * BLOCK, 0], [BLOCK, cols])
            ub = pl.load(b, [j * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.mul(ua, ub), [j * BLOCK, 0], d)
    return c, d


@pl.program
class SumThenShiftedCopy:
    """c = a + b; d = the BLOCK rows of a from row `start` (a run-time value: past a's end, the load fails
    after c's loop ran)."""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[32, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 128], pl.FP32]], d: pl.Out[pl.Tensor[[8, 128], pl.FP32]],
             start: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="sum"):
            for i in pl.range(4):
                ta = pl.load(a, [i * 8, 0], [8, 128])
                tb = pl.load(b, [i * 8, 0], [8, 128])
                pl.store(pl.add(ta, tb), [i * 8, 0], c)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="shifted"):
            t = pl.load(a, [start, 0], [8, 128])
            d = pl.store(t, [0, 0], d)
        return c


@pl.jit
def sum_then_first_block_product(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """Two loops into c: the whole sum, then the first two row blocks overwritten with the product."""
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
    with pl.at(level=pl.Level.CORE_GROUP):
        for j in pl.range(2):
            ua = pl.load(a, [j * BLOCK, 0], [BLOCK, cols])
            ub = pl.load(b, [j * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.mul(ua, ub), [j * BLOCK, 0], c)
    return c


def _inputs(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((ROWS, COLS)).astype(dtype) for _ in range(2))


@pytest.fixture
def materialized(monkeypatch):
    """Every array a pending result was computed into: a private buffer (the route that copies afterwards)
    or, written straight through, the caller's array."""
    targets = []
    real = out_coverage.materialize

    def spy(windows, out):
        targets.append(out)
        return real(windows, out)
    monkeypatch.setattr(out_coverage, "materialize", spy)
    from pypto.runtime.sim import host_args
    monkeypatch.setattr(host_args, "materialize", spy)
    return targets


def _private(targets: list, *callers) -> list:
    """The shapes of the targets that are not the caller's arrays: the private-buffer route."""
    return [t.shape for t in targets if not any(t is u for u in callers)]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_result_goes_straight_into_the_callers_array(platform, materialized):
    a, b = _inputs(1)
    c = np.full_like(a, 3.0)
    add_rows(a, b, c, config=RunConfig(platform=platform))
    assert c.tobytes() == np.add(a, b).tobytes()
    assert _private(materialized, c) == []         # never computed into the private buffer
    assert len(materialized) == 1 and materialized[0] is c


def test_a_strided_caller_array_gets_only_its_elements():
    a, b = _inputs(2)
    big = np.full((2 * ROWS, COLS), 5.0, np.float32)
    c = big[::2]                                   # every other row: a writable strided view
    add_rows(a, b, c)
    assert big[::2].tobytes() == np.add(a, b).tobytes()
    assert (big[1::2] == 5.0).all()


def test_an_output_that_is_also_an_input_reads_the_input_as_it_was(materialized):
    a, b = _inputs(3)
    x = a.copy()
    add_rows(x, b, x)                              # c aliases a: a + b from a's bytes before the call
    assert x.tobytes() == np.add(a, b).tobytes()
    assert _private(materialized, x) == [(ROWS, COLS)]


def test_an_output_aliasing_another_results_operand_takes_the_private_route(materialized):
    """Written straight through in order, c's bytes would land in a before d = a * b is computed."""
    a, b = _inputs(4)
    x = a.copy()
    d = np.zeros_like(a)
    sum_and_product(x, b, x, d)
    assert x.tobytes() == np.add(a, b).tobytes()
    assert d.tobytes() == np.multiply(a, b).tobytes()
    assert len(_private(materialized, x, d)) == 2


def test_two_outputs_without_aliasing_both_go_straight_through(materialized):
    a, b = _inputs(5)
    c, d = np.zeros_like(a), np.zeros_like(a)
    sum_and_product(a, b, c, d)
    assert c.tobytes() == np.add(a, b).tobytes() and d.tobytes() == np.multiply(a, b).tobytes()
    assert _private(materialized, c, d) == []


def test_a_converted_dtype_takes_the_private_route(materialized):
    a, b = _inputs(6)
    c = np.zeros((ROWS, COLS), np.float64)
    loose = RunConfig(sim_strict=False)            # (an FP32 kernel; the float64 array is converted)
    add_rows.compile(a, b, np.zeros_like(a), config=loose)(a, b, c, config=loose)
    np.testing.assert_array_equal(c, np.add(a, b).astype(np.float64))
    assert _private(materialized, c) == [(ROWS, COLS)]


def test_a_later_loop_into_the_same_buffer_sees_the_pending_result(materialized):
    a, b = _inputs(7)
    c = np.zeros_like(a)
    sum_then_first_block_product(a, b, c)
    want = np.add(a, b)
    want[:2 * BLOCK] = np.multiply(a[:2 * BLOCK], b[:2 * BLOCK])
    assert c.tobytes() == want.tobytes()
    assert _private(materialized, c) == [(ROWS, COLS)]   # written into the buffer before the second loop stored


def test_a_run_failing_after_the_loop_changes_nothing_and_drops_the_pending_result(monkeypatch):
    from pypto.runtime import run
    from pypto.runtime.sim import fused_blocks
    deferred = []
    real = fused_blocks.first_store

    def spy(tensor, whole, later=None):
        deferred.append(real(tensor, whole, later))
        return deferred[-1]
    monkeypatch.setattr(fused_blocks, "first_store", spy)
    a, b = _inputs(8)
    c, d = np.full_like(a, 4.0), np.full((BLOCK, COLS), 4.0, np.float32)
    compiled = run(SumThenShiftedCopy, a, b, c, d, 0, config=RunConfig())
    c[...], d[...] = 4.0, 4.0
    with pytest.raises(PyptoError, match="outside the tensor extent"):
        compiled(a, b, c, d, ROWS)                 # the second scope loads past a's last row
    assert deferred[-1] is True                    # c's loop ran first and left its result pending
    assert (c == 4.0).all() and (d == 4.0).all()
    assert not any(w.pending is not None for w in out_coverage._TRACKED.values())
    compiled(a, b, c, d, BLOCK)                    # the next call, on the same pooled buffers
    assert c.tobytes() == np.add(a, b).tobytes()
    assert d.tobytes() == a[BLOCK:2 * BLOCK].tobytes()


def test_repeated_calls_each_write_their_own_result():
    c = np.zeros((ROWS, COLS), np.float32)
    for seed in range(3):
        a, b = _inputs(10 + seed)
        add_rows(a, b, c)
        assert c.tobytes() == np.add(a, b).tobytes()
