"""A whole program: an InCore kernel plus an Orchestration function, run with `run`.

`@pl.program` groups functions; the Orchestration function is the host-side control plane
(allocates tensors, calls kernels), the InCore function is the on-chip kernel. Tensor-level
kernels return their result; the compiler adds the output parameter and the allocation at
the call site (ConvertTensorToTileOps), as the "after" form below the class shows when
`compiled.lowered.as_python()` is printed.

Run:  python examples/intermediate/02_program.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig, run


@pl.program
class AddTwice:
    @pl.function(type=pl.FunctionType.InCore)
    def add_twice(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        once: pl.Tensor[[64, 64], pl.FP32] = pl.add(x, x)
        twice: pl.Tensor[[64, 64], pl.FP32] = pl.add(once, x)
        return twice

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        y: pl.Tensor[[64, 64], pl.FP32] = self.add_twice(x)
        return y


def main():
    x = np.random.default_rng(3).standard_normal((64, 64), dtype=np.float32)
    compiled = run(AddTwice, config=RunConfig())     # no tensors given: compile only
    y = compiled(x)                                   # return style: the output is allocated for you
    np.testing.assert_allclose(y, 3 * x, rtol=1e-5, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
