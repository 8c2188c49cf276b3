"""Errors are reported like a compiler's: what went wrong, where (file:line:col), and a hint.

Every mistake pypto detects is a `PyptoError` subclass carrying a source span: `str(err)` is
the one-line "file:line:col: message" form, `err.render()` the long form with the source
line and a caret. This example makes two classic mistakes, catches each and checks that
the error names the line of the user's code, then carries on with a correct kernel.

What it shows:
  - `TypeCheckError`: adding tiles of different shapes (found while parsing the kernel);
  - a `TypeCheckError` for a load window that runs past the end of its tensor (a DMA that
    would read outside the tensor on the chip);
  - (a tile too big for its buffer is a `CapacityError`, found later by memory planning but
    pointing at the load that made the tile: see docs/language/memory.md);
  - `err.span.line`, `err.hint`, `err.render()`.

Run:  python examples/utils/03_error_handling.py
"""

import numpy as np

import pypto.language as pl
from pypto.errors import PyptoError, TypeCheckError


@pl.jit
def mismatched(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 16])
        tb = pl.load(b, [0, 0], [16, 32])
        pl.store(pl.add(ta, tb), [0, 0], c)                 # BAD-SHAPES
    return c


@pl.jit
def past_the_end(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [8, 0], [16, 16])                    # BAD-WINDOW: rows 8..23 of 16
        pl.store(pl.exp(t), [0, 0], c)
    return c


@pl.jit
def fine(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.exp(pl.load(a, [0, 0], [16, 16])), [0, 0], c)
    return c


def line_of(marker: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        source = f.read().splitlines()
    return next(number for number, text in enumerate(source, start=1) if text.rstrip().endswith(marker))


def expect(error_type, marker, call):
    try:
        call()
    except error_type as err:
        assert isinstance(err, PyptoError)
        assert err.span is not None and err.span.line == line_of(marker), str(err)
        assert f":{err.span.line}:" in str(err) and err.hint
        assert "^" in err.render()                           # the caret under the offending code
        return err
    raise AssertionError(f"expected {error_type.__name__}")


def main():
    f32 = lambda *shape: np.zeros(shape, np.float32)
    err = expect(TypeCheckError, "# BAD-SHAPES", lambda: mismatched(f32(16, 16), f32(16, 32), f32(16, 16)))
    assert "different shapes" in err.message
    err = expect(TypeCheckError, "# BAD-WINDOW: rows 8..23 of 16", lambda: past_the_end(f32(16, 16), f32(16, 16)))
    assert "outside the tensor extent" in err.message
    x, y = np.ones((16, 16), np.float32), f32(16, 16)
    fine(x, y)                                              # the session goes on after an error
    np.testing.assert_allclose(y, np.e, rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
