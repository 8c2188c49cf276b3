"""An Out buffer that only whole fused loops store into skips its poison fill when the first loop
overwrites every element (pypto.runtime.sim.host_args.fill_outputs, out_coverage.first_store); in
every other case it is filled before anything can see it, so a partial write still warns and keeps
the caller's bytes, and a pooled buffer never hands an earlier call's data to a later one."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, PyptoWarning
from pypto.runtime import RunConfig
from pypto.runtime.sim import host_args, out_coverage

ROWS, COLS, BLOCK = 32, 128, 8


def _first_blocks():
    @pl.jit
    def first_blocks(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
        """c's first n row blocks = a + b."""
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(n):
                ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
                tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
                pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
        return c
    return first_blocks


first_blocks = _first_blocks()


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, ROWS, COLS)).astype(np.float32)


def _fills(monkeypatch):
    """Record the shape of every Out-buffer poison fill (bind, deferred, or at write-back)."""
    filled = []
    real = host_args.poison_output

    def counting(arr):
        filled.append(arr.shape)
        return real(arr)
    monkeypatch.setattr(host_args, "poison_output", counting)
    monkeypatch.setattr(out_coverage, "poison_output", counting)
    return filled


def _entry(jitted, *args):
    config = RunConfig()
    compiled = jitted.compile(*args, config=config)
    return compiled._sim_for(config), compiled.entry


def test_a_buffer_the_loop_covers_whole_is_never_filled(monkeypatch):
    filled = _fills(monkeypatch)
    a, b = _inputs(1)
    c = np.zeros_like(a)
    first_blocks(a, b, c, ROWS // BLOCK)
    np.testing.assert_array_equal(c, a + b)
    assert filled == []
    assert host_args.loop_filled_outputs(*_entry(first_blocks, a, b, c, 4)) == {"c"}


def test_a_later_partial_call_does_not_see_the_earlier_calls_data(monkeypatch):
    filled = _fills(monkeypatch)
    a1, b1 = _inputs(1)
    a2, b2 = _inputs(2)
    c = np.zeros_like(a1)
    first_blocks(a1, b1, c, ROWS // BLOCK)               # the pooled buffer now holds a1 + b1
    c2 = np.full_like(a1, 7.0)
    with pytest.warns(PyptoWarning, match=r"within \[16:32, 0:128\]"):
        first_blocks(a2, b2, c2, 2)
    np.testing.assert_array_equal(c2[:16], a2[:16] + b2[:16])
    assert (c2[16:] == 7.0).all()
    assert filled == [(ROWS, COLS)]                      # filled once, by the partial loop


@pytest.mark.parametrize("blocks", [0, 1])
def test_a_loop_of_fewer_than_two_blocks_fills_first(blocks, monkeypatch):
    a1, b1 = _inputs(1)
    a2, b2 = _inputs(2)
    c = np.zeros_like(a1)
    first_blocks(a1, b1, c, ROWS // BLOCK)
    c2 = np.full_like(a1, 9.0)
    with pytest.warns(PyptoWarning, match="was never written" if blocks == 0 else r"within \[8:32, 0:128\]"):
        first_blocks(a2, b2, c2, blocks)
    np.testing.assert_array_equal(c2[:8 * blocks], a2[:8 * blocks] + b2[:8 * blocks])
    assert (c2[8 * blocks:] == 9.0).all()


def test_a_buffer_no_loop_touched_is_filled_at_write_back(monkeypatch):
    """The kernel never starts its loop (its launch is skipped): write-back fills, scans and keeps the caller's bytes."""
    from pypto.runtime.sim import fused_blocks
    a1, b1 = _inputs(1)
    c = np.zeros_like(a1)
    first_blocks(a1, b1, c, ROWS // BLOCK)               # the pooled buffer holds a1 + b1
    monkeypatch.setattr(fused_blocks, "fill_before_blocks", lambda c: None)
    c2 = np.full_like(a1, 5.0)

    skipped = _first_blocks()                            # generated with the patched helper
    skipped(a1, b1, c, ROWS // BLOCK)                     # its pool: a1 + b1
    with pytest.warns(PyptoWarning, match="was never written"):
        skipped(a1, b1, c2, 0)                           # no loop resolves the deferred fill
    assert (c2 == 5.0).all()


def test_a_failed_run_leaves_the_caller_untouched_and_the_next_call_clean():
    a, b = _inputs(3)
    c = np.full_like(a, 4.0)
    with pytest.raises(PyptoError, match="outside the tensor extent"):
        first_blocks(a, b, c, ROWS // BLOCK + 1)
    assert (c == 4.0).all()
    with pytest.warns(PyptoWarning, match=r"within \[24:32, 0:128\]"):
        first_blocks(a, b, c, 3)
    np.testing.assert_array_equal(c[:24], a[:24] + b[:24])
    assert (c[24:] == 4.0).all()


def test_a_kernel_parameter_with_any_other_use_is_not_loop_filled():
    """loop_filled_params counts a parameter's uses: each must be a whole fused loop's store target."""
    from types import SimpleNamespace as NS
    from pypto.runtime.sim import fused_blocks
    c, d = object(), object()
    gen = NS(loop_stores={c: 1, d: 2}, _fusion_kernel=NS(uses={c: 2, d: 2}), func=NS(params=[c, d]))
    assert fused_blocks.loop_filled_params(gen) == {1}     # c is also used once more (a load, a plain store)


def _source(jitted, *args) -> str:
    config = RunConfig()
    sim = jitted.compile(*args, config=config)._sim_for(config)
    return "\n".join(code.source for code in sim.functions.values())


@pl.program
class ReadThenLoop:
    """`reader` copies mid's first block (never written yet: poison) to out; then `writer` fills mid whole."""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Tensor[[32, 16], pl.FP32],
             mid: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="reader"):
            t = pl.load(mid, [0, 0], [16, 16])
            out = pl.store(t, [0, 0], out)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="writer"):
            for i in pl.range(2):
                p = pl.load(x, [i * 16, 0], [16, 16])
                q = pl.load(y, [i * 16, 0], [16, 16])
                pl.store(pl.add(p, q), [i * 16, 0], mid)
        return out


def test_an_orchestration_that_also_reads_the_buffer_fills_it_first():
    """Two calls: the reader must see the poison both times, never the first call's sums."""
    from pypto.runtime import run
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    compiled = None
    for scale in (1.0, 2.0):
        mid, out = np.zeros_like(x), np.zeros((16, 16), np.float32)
        if compiled is None:
            compiled = run(ReadThenLoop, x * scale, x, mid, out, config=RunConfig())
        else:
            compiled(x * scale, x, mid, out)
        np.testing.assert_array_equal(mid, x * scale + x)
        assert np.isnan(out).all()             # the Out poison, copied by the reader


@pytest.mark.parametrize("returned", ["param", "other"])
def test_an_entry_returning_other_memory_fills_up_front(returned):
    """launch copies a returned tensor that is not the parameter into its Out buffer: that write is no
    fused loop's, so such an entry defers no fill."""
    from types import SimpleNamespace as NS
    from pypto.ir import ReturnStmt, ScalarType, Var
    from pypto.ir.dtypes import INDEX
    from pypto.ir.enums import FunctionType
    c, other = Var("c", ScalarType(INDEX)), Var("other", ScalarType(INDEX))
    func = NS(func_type=FunctionType.AIV, params=[c], body=ReturnStmt([c if returned == "param" else other]))
    sim = NS(functions={"k": NS(func=func, loop_filled=frozenset({0}))})
    assert host_args.loop_filled_outputs(sim, "k") == ({"c"} if returned == "param" else frozenset())
