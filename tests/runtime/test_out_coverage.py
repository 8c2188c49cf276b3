"""Write-back skips the poison scan of an Out buffer only when the kernels' plain 2-D stores covered all of
it (pypto.runtime.sim.out_coverage); everything observable stays as with the scan: the caller's bytes
where nothing was stored, the warning naming the region, no leak of an earlier call's results through
the reused private buffer, a failed run changing nothing, and poison copied by the kernel from its own
never-written output still counting as unwritten."""

import warnings

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, PyptoWarning
from pypto.runtime.sim import host_args, out_coverage

ROWS, COLS, BLOCK = 32, 128, 8


@pl.jit
def copy_blocks(a: pl.Tensor, blocks: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c[:8 n] = a[:8 n] with n = blocks[0] (read at run time: one compiled program, one private buffer),
    8 rows (the whole width) per store."""
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        n = pl.read(blocks, [0])
        for i in pl.range(n):
            t = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
            pl.store(t, [i * BLOCK, 0], c)
    return c


@pl.jit
def left_fast_right_partial(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    """The left half by plain stores of half the width (recorded), the right half by the store of a tile
    whose valid region is smaller than the tile (the general store, not recorded): every element is
    written, but the record alone cannot prove it."""
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK):
            t = pl.load(a, [i * BLOCK, 0], [BLOCK, cols // 2])
            pl.store(t, [i * BLOCK, 0], c)
        r = pl.load(a, [0, cols // 2], [rows, cols], valid_shapes=[rows, cols // 2])
        pl.store(r, [0, cols // 2], c)
    return c


@pl.jit
def left_fast_right_atomic(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    """The right half by an atomic add (not recorded) onto never-written bytes: NaN, written."""
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK):
            t = pl.load(a, [i * BLOCK, 0], [BLOCK, cols // 2])
            pl.store(t, [i * BLOCK, 0], c)
        r = pl.load(a, [0, cols // 2], [rows, cols // 2])
        pl.store(r, [0, cols // 2], c, atomic=pl.AtomicType.Add)
    return c


@pl.jit
def top_then_copy_bottom(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    """Stores a's top half, then copies c's own bottom half (never written: poison) onto itself, so the
    stores cover every element, yet the bottom holds only poison."""
    rows, cols = a.shape
    half = rows // 2
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [half, cols])
        pl.store(t, [0, 0], c)
        u = pl.load(c, [half, 0], [half, cols])
        pl.store(u, [half, 0], c)
    return c


def _n(blocks: int) -> np.ndarray:
    return np.array([blocks], np.int32)


def _returned(a: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """copy_blocks called in return style (its inputs only): the output is a fresh poisoned buffer."""
    return copy_blocks.compile(a, blocks, np.empty_like(a))(a, blocks)


def _a():
    return np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)


@pytest.fixture
def no_scan(monkeypatch):
    """Fail the test if write-back scans for poison."""
    def refuse(*args):
        raise AssertionError("write-back scanned an Out buffer its stores covered whole")
    monkeypatch.setattr(host_args, "copy_if_written", refuse)
    monkeypatch.setattr(host_args, "unwritten_mask", refuse)


def test_a_wholly_stored_output_is_copied_without_a_scan(no_scan):
    a, c = _a(), np.zeros((ROWS, COLS), np.float32)
    before = dict(out_coverage._TRACKED)          # (a failed run elsewhere may leave its pooled buffer's record)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)
        copy_blocks(a, _n(ROWS // BLOCK), c)
        y = _returned(a, _n(ROWS // BLOCK))                 # return style: a fresh buffer, also not scanned
    np.testing.assert_array_equal(c, a)
    np.testing.assert_array_equal(y, a)
    assert out_coverage._TRACKED == before                # records end with the call


def test_the_reused_private_buffer_never_shows_an_earlier_calls_results():
    a, c = _a(), np.zeros((ROWS, COLS), np.float32)
    copy_blocks(a, _n(ROWS // BLOCK), c)                      # writes all of the private buffer
    kept = np.full((ROWS, COLS), -7.0, np.float32)
    with pytest.warns(PyptoWarning, match=r"output 'c' was not written .* 2048 of 4096 elements "
                                          r"\(within \[16:32, 0:128\]\)"):
        copy_blocks(a, _n(2), kept)
    np.testing.assert_array_equal(kept[:16], a[:16])
    assert (kept[16:] == -7.0).all()                      # the caller's bytes, not the last call's a[16:]
    with pytest.warns(PyptoWarning, match=r"within \[16:32, 0:128\]"):
        y = _returned(a, _n(2))
    assert np.isnan(y[16:]).all()


def test_a_failed_run_changes_nothing_and_the_next_call_starts_clean():
    a, c = _a(), np.full((ROWS, COLS), 5.0, np.float32)
    with pytest.raises(PyptoError, match="outside the tensor"):
        copy_blocks(a, _n(ROWS // BLOCK + 1), c)              # the last load faults after 4 stores
    assert (c == 5.0).all()
    with pytest.warns(PyptoWarning, match=r"within \[8:32, 0:128\]"):
        copy_blocks(a, _n(1), c)                              # the failed run's stores do not count as written
    np.testing.assert_array_equal(c[:8], a[:8])
    assert (c[8:] == 5.0).all()


def test_stores_the_record_misses_fall_back_to_the_scan(monkeypatch):
    scans = []
    scan = host_args.copy_if_written
    monkeypatch.setattr(host_args, "copy_if_written", lambda user, buf: scans.append(1) or scan(user, buf))
    a, c = _a(), np.full((ROWS, COLS), 3.0, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)
        left_fast_right_partial(a, c)
        np.testing.assert_array_equal(c, a)
        c[:] = 3.0
        left_fast_right_atomic(a, c)
    np.testing.assert_array_equal(c[:, :COLS // 2], a[:, :COLS // 2])
    assert np.isnan(c[:, COLS // 2:]).all()               # an add onto poison: written, and NaN (as ever)
    assert len(scans) == 2


def test_poison_a_kernel_copies_from_its_own_output_still_counts_as_unwritten():
    a, c = _a(), np.full((ROWS, COLS), 9.0, np.float32)
    with pytest.warns(PyptoWarning, match=r"within \[16:32, 0:128\]"):
        top_then_copy_bottom(a, c)
    np.testing.assert_array_equal(c[:16], a[:16])
    assert (c[16:] == 9.0).all()


def test_the_record_proves_coverage_only_when_windows_leave_no_gap():
    buf = np.empty((10, 4), np.float32)
    rec = out_coverage.track(buf)
    for lo in (0, 6, 3):
        out_coverage.note_store(buf, lo, 0, 3, 4)         # rows 0-8 in any order: row 9 missing
    assert not rec.covers_all()
    out_coverage.note_store(buf, 9, 0, 1, 2)
    assert not rec.covers_all()                           # (9, 2:4) still missing
    out_coverage.note_store(buf, 8, 2, 2, 2)
    assert rec.covers_all()
    out_coverage.note_load(buf[1:3])                      # a load through a view marks the buffer read
    assert not rec.covers_all()
    out_coverage.untrack(buf)
    assert id(buf) not in out_coverage._TRACKED


def test_a_dropped_buffer_leaves_no_record():
    buf = np.empty((4, 4), np.float32)
    out_coverage.track(buf)
    key = id(buf)
    del buf
    assert key not in out_coverage._TRACKED
