"""Looking inside the compiler: the IR after every pass, as DSL text you can read and re-load.

`ir.compile(program, dump_passes=True)` writes, into a new build directory (under
`$PYPTO_PROG_BUILD_DIR`, default `./build_output/`; `output_dir=` chooses it), `passes_dump/00_frontend.py`
and one `NN_after_<Pass>.py` per pass that ran. Each is DSL text: `pl.loads(path)` reads it
back into a program, which compiles and runs like the original. `pypto dumps <dir>` lists
them, `pypto diff <dir> <Pass>` shows what one pass changed.

What it shows:
  - the dump files and their order;
  - re-loading the dump after ConvertTensorToTileOps (tile level now: loads and stores are
    explicit) and checking that the op the pass introduced is there;
  - the same computation run from the original program.

Run:  python examples/utils/04_pass_dumps.py
"""

import pathlib

import numpy as np

import pypto.language as pl
from pypto import ir


@pl.program
class Residual:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
        y: pl.Tensor[[32, 64], pl.FP32] = pl.add(pl.exp(x), x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32]) -> pl.Tensor[[32, 64], pl.FP32]:
        y: pl.Tensor[[32, 64], pl.FP32] = self.kernel(x)
        return y


def main():
    compiled = ir.compile(Residual, dump_passes=True)
    dumps = sorted(pathlib.Path(compiled.output_dir).glob("passes_dump/*.py"))
    names = [d.name for d in dumps]
    assert names[0] == "00_frontend.py", names
    after_convert = next(d for d in dumps if d.name.endswith("_after_ConvertTensorToTileOps.py"))
    text = after_convert.read_text()
    assert "pl.tile.load" in text and "pl.tile.exp" in text            # the pass made tile ops
    assert "pl.tile.load" not in dumps[0].read_text()                 # the frontend had none
    reloaded = pl.loads(after_convert)
    assert reloaded.as_python() == text                                # the dump is the IR, exactly
    x = np.random.default_rng(62).uniform(-1, 1, (32, 64)).astype(np.float32)
    np.testing.assert_allclose(compiled(x), np.exp(x) + x, rtol=1e-6)
    print("OK")


if __name__ == "__main__":
    main()
