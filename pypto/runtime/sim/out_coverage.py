"""Which windows of an Out argument's private buffer the kernels' plain 2-D stores wrote.

Write-back must find the elements of a poisoned Out buffer the kernel never wrote (their caller's
bytes are kept, with a warning). Scanning 16 MB for the poison pattern costs about half a copy;
when the 2-D store fast path (pypto.runtime.sim.fastpath) reports its windows here and they cover
the whole buffer, every element was written and write-back copies without a scan.

The record only ever proves coverage; it never decides what is unwritten. Stores it does not see
(strided, predicated, atomic, through a view, host-side copies) leave it short, and write-back
scans as before. A load from the buffer (or a view of it) marks it `read`: a kernel that copies
never-written bytes to another place stores the poison pattern, which the scan treats as
unwritten, so such a buffer is scanned too.

    windows = track(buf)          # HostArgs, when it poisons an Out buffer
    note_store(tensor, o0, o1, r, c)   # the store fast path
    note_load(tensor)             # loads of GM
    windows.covers_all()          # write-back: True -> copy without a scan
    untrack(buf)

A whole fused loop that is the first to store into a buffer only such loops touch, and that covers
it whole, may leave its result *pending* (`first_store(..., later=compute)`): nothing can read the
buffer before write-back, so write-back runs `compute` straight into the caller's array and the
16 MB copy-back of a large elementwise kernel disappears. A later loop on the same buffer, or
write-back when it cannot write straight through (aliasing, a converted dtype), runs it into the
buffer first (`materialize`); a failed run drops it with the record (`untrack`).
"""

from __future__ import annotations

import weakref

import numpy as np

from pypto.runtime.sim.poison import poison_output

_TRACKED: dict = {}        # id(private Out buffer) -> WrittenWindows


class WrittenWindows:
    """The 2-D windows stored into one private Out buffer during one call."""
    __slots__ = ("ref", "rows", "boxes", "read", "unfilled", "pending", "__weakref__")

    def __init__(self, buf: np.ndarray):
        key = id(buf)
        # weak: a failed run never reaches write-back, and its buffer must not be kept alive by this entry
        self.ref = weakref.ref(buf, lambda _, key=key: _forget(key))
        self.rows: list = []       # (first row, end row) of stores spanning every column
        self.boxes: list = []      # (o0, o1, rows, cols) of the other stores
        self.read = False
        self.unfilled = False      # its poison fill deferred until the first store (`first_store`)
        self.pending = None        # (compute(out), operands): a whole loop's result not yet written

    def covers_all(self) -> bool:
        """Every element of the buffer lies in a stored window, and nothing loaded from the buffer."""
        buf = self.ref()
        if buf is None or self.read or buf.ndim != 2 or not buf.size:
            return False
        if not self.boxes:
            return _rows_cover(self.rows, buf.shape[0])
        mask = np.zeros(buf.shape, dtype=bool)
        for lo, hi in self.rows:
            mask[lo:hi] = True
        for o0, o1, r, c in self.boxes:
            mask[o0:o0 + r, o1:o1 + c] = True
        return bool(mask.all())


def _rows_cover(spans: list, nrows: int) -> bool:
    end = 0
    for lo, hi in sorted(spans):
        if lo > end:
            return False
        if hi > end:
            end = hi
    return end >= nrows


def _forget(key: int) -> None:
    got = _TRACKED.get(key)
    if got is not None and got.ref() is None:
        del _TRACKED[key]


def track(buf: np.ndarray) -> WrittenWindows:
    """Start a fresh record for `buf` (a private Out buffer, just poisoned)."""
    windows = _TRACKED[id(buf)] = WrittenWindows(buf)
    return windows


def untrack(buf: np.ndarray) -> None:
    got = _TRACKED.get(id(buf))
    if got is not None and got.ref() is buf:
        del _TRACKED[id(buf)]


def note_store(tensor: np.ndarray, o0: int, o1: int, r: int, c: int) -> None:
    """A plain store of `tensor[o0:o0 + r, o1:o1 + c]` (bounds already checked)."""
    got = _TRACKED.get(id(tensor))
    if got is not None and got.ref() is tensor:
        if o1 == 0 and c == tensor.shape[1]:
            got.rows.append((o0, o0 + r))
        else:
            got.boxes.append((o0, o1, r, c))


def note_stores(tensor: np.ndarray, corners: list, r: int, c: int) -> None:
    """`note_store` of the windows of `r` x `c` at each (o0, o1) of `corners`, in order."""
    got = _TRACKED.get(id(tensor))
    if got is not None and got.ref() is tensor:
        if c == tensor.shape[1] and all(o1 == 0 for _, o1 in corners):
            got.rows.extend((o0, o0 + r) for o0, _ in corners)
        else:
            got.boxes.extend((o0, o1, r, c) for o0, o1 in corners)


def first_store(tensor: np.ndarray, whole: bool, later=None) -> bool:
    """A fused loop is about to store into `tensor` (`whole`: into every element of it). A tracked Out
    buffer whose poison fill was deferred (only such loops can touch it) gets its fill now, unless
    `whole`: then its earlier bytes are all overwritten before anything reads them. With `later`
    ((compute(out), operands)) and `whole`, the loop's result is left pending for write-back instead of
    computed: True, and the caller skips its own computation. An earlier loop's pending result is
    written into the buffer first."""
    got = _TRACKED.get(id(tensor))
    if got is None or got.ref() is not tensor:
        return False
    if got.pending is not None:
        materialize(got, tensor)
    if not got.unfilled:
        return False
    got.unfilled = False
    if not whole:
        poison_output(tensor)
        return False
    if later is not None:
        got.pending = later
        return True
    return False


def materialize(windows: WrittenWindows, out: np.ndarray) -> None:
    """Write a pending loop result into `out`: its own buffer (which is then an ordinary stored buffer) or, at
    write-back, the caller's array. The record holds no pending result afterwards."""
    compute, _operands = windows.pending
    windows.pending = None
    with np.errstate(all="ignore"):             # (as the run computes: launch.run_ranks)
        compute(out)


def note_load(tensor: np.ndarray) -> None:
    """A load from `tensor`: when it is (a view of) a tracked buffer, that buffer is scanned at write-back."""
    got = _TRACKED.get(id(tensor))
    if got is None:
        tensor = tensor.base
        if tensor is None:
            return
        got = _TRACKED.get(id(tensor))
        if got is None:
            return
    if got.ref() is tensor:
        got.read = True
