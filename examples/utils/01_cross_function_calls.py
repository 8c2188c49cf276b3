"""Functions calling functions: inline helpers, and InCore kernels called from orchestration.

One kernel is called twice (the second call reads the first one's result), another returns
two tensors.

What it shows:
  - `@pl.inline` functions: spliced into the caller at parse time (no call in the IR);
  - an InCore kernel called twice from the Orchestration function (two tasks, the second
    reading the first one's result);
  - a kernel returning two tensors (a tuple), unpacked at the call site.

Run:  python examples/utils/01_cross_function_calls.py
"""

import numpy as np

import pypto.language as pl
from pypto import ir

M, N = 32, 64
T = pl.Tensor[[M, N], pl.FP32]


@pl.inline
def squared_plus(t, c):
    return pl.add(pl.mul(t, t), c)


@pl.program
class Calls:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: T) -> T:
        y: T = squared_plus(x, 0.5)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def split_signs(self, x: T) -> tuple[T, T]:
        pos: T = pl.relu(x)
        neg: T = pl.sub(x, pos)
        return pos, neg

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T) -> tuple[T, T]:
        once: T = self.step(x)
        twice: T = self.step(once)
        pos, neg = self.split_signs(twice)
        return pos, neg


def main():
    compiled = ir.compile(Calls)
    assert "squared_plus" not in compiled.lowered.functions           # inlined, not called
    x = np.random.default_rng(60).uniform(-1, 1, (M, N)).astype(np.float32)
    pos, neg = compiled(x)
    once = x * x + 0.5
    twice = once * once + 0.5
    np.testing.assert_allclose(pos, np.maximum(twice, 0), rtol=1e-5)
    np.testing.assert_allclose(neg, twice - np.maximum(twice, 0), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
