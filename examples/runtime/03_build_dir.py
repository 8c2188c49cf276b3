"""Build directories: compile once to disk, reload and run later with `CompiledProgram.from_dir`.

`ir.compile(program, save_kernels=True)` writes the artifacts into a new build directory
(under `$PYPTO_PROG_BUILD_DIR`, default `./build_output/<program>_<timestamp>/`; pass
`output_dir=` to choose it): `ptoas/*.pto` (one PTO MLIR module per kernel), `orchestration/`
(the final IR as DSL text and the host orchestration), the simulator code, `report/` and
`kernel_config.py`. `CompiledProgram.from_dir(d)` loads them back without re-running the
compiler's passes.

What it shows:
  - the files of a build directory;
  - a reloaded program computing the same result as the original.

Run:  python examples/runtime/03_build_dir.py
"""

import pathlib

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import CompiledProgram


@pl.program
class Softplus:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
        y: pl.Tensor[[16, 64], pl.FP32] = pl.log(pl.add(pl.exp(x), 1.0))
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
        y: pl.Tensor[[16, 64], pl.FP32] = self.kernel(x)
        return y


def main():
    x = np.random.default_rng(72).uniform(-3, 3, (16, 64)).astype(np.float32)
    compiled = ir.compile(Softplus, save_kernels=True)
    out = compiled.output_dir
    files = {p.relative_to(out).as_posix() for p in pathlib.Path(out).rglob("*") if p.is_file()}
    assert "ptoas/kernel.pto" in files and "kernel_config.py" in files, sorted(files)
    reloaded = CompiledProgram.from_dir(out)
    np.testing.assert_allclose(reloaded(x), compiled(x), rtol=0, atol=0)
    np.testing.assert_allclose(reloaded(x), np.log1p(np.exp(x)), rtol=1e-5, atol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
