"""Programs from text: `pl.parse` reads DSL source from a string, `as_python()` prints it back.

The printer and the parser are inverses: every program (and every pass dump) prints as DSL
text that parses back to a structurally equal program. That makes text a convenient way to
generate kernels, store them, or diff them.

What it shows:
  - `pl.parse(text)` → an `ir.Program`, then `ir.compile` and a call;
  - a program generated from a template string (the row count filled in with an f-string);
  - `program.as_python()` round trip: print → parse → print gives the same text.

Run:  python examples/utils/02_parse_from_text.py
"""

import numpy as np

import pypto.language as pl
from pypto import ir

TEMPLATE = """
import pypto.language as pl

@pl.program
class Scaled:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[{rows}, 64], pl.FP32],
               y: pl.Out[pl.Tensor[[{rows}, 64], pl.FP32]]) -> pl.Tensor[[{rows}, 64], pl.FP32]:
        t: pl.Tile[[{rows}, 64], pl.FP32] = pl.load(x, [0, 0], [{rows}, 64])
        y = pl.store(pl.mul(pl.exp(t), {scale}), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{rows}, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[{rows}, 64], pl.FP32]]) -> pl.Tensor[[{rows}, 64], pl.FP32]:
        y = self.kernel(x, y)
        return y
"""

# A module-level program from text (what `pypto compile` of this file compiles).
SCALED_16 = pl.parse(TEMPLATE.format(rows=16, scale=2.0))


def main():
    rng = np.random.default_rng(61)
    for rows, scale in ((16, 2.0), (32, 0.5)):
        program = pl.parse(TEMPLATE.format(rows=rows, scale=scale))
        text = program.as_python()
        assert pl.parse(text).as_python() == text                  # print → parse → print is stable
        x = rng.uniform(-1, 1, (rows, 64)).astype(np.float32)
        y = np.zeros_like(x)
        ir.compile(program)(x, y)
        np.testing.assert_allclose(y, np.exp(x) * scale, rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
