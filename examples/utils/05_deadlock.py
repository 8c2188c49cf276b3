"""The simulator never hangs: a broken pipe protocol ends in a DeadlockError naming every waiter.

Hand-written AIC / AIV kernels talk through cross-core pipes. Here the cube core pushes one
tile but the vector core pops two: on the chip the vector core would wait forever. The
simulator notices that no core can make progress and raises `DeadlockError`, listing each
blocked core with the op and the source line it is stuck on. The fixed kernel (one pop)
then runs.

What it shows:
  - explicit Group / AIC / AIV functions with `tpush_to_aiv` / `tpop_from_aic` / `tfree_to_aic`;
  - catching `DeadlockError` and reading its message.

Run:  python examples/utils/05_deadlock.py
"""

import numpy as np

import pypto.language as pl
from pypto.errors import DeadlockError
from pypto.runtime import RunConfig, run

POPS = 2                      # the bug: one push, two pops


def make_program(pops: int):
    @pl.program
    class PushPop:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
            c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v_buf", peer_func="vec")
            pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            pl.tile.tpush_to_aiv(m, split=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, x: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v_buf", size=2048)
            pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
            for _ in pl.range(pops):
                t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
                out = pl.store(t, [0, 0], out)
                pl.system.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, x: pl.Tensor[[16, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            self.cube(x, out)
            r = self.vec(x, out)
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            r = self.group(x, out)
            return r

    return PushPop


Broken = make_program(POPS)
Fixed = make_program(1)


def main():
    x = np.random.default_rng(63).standard_normal((16, 16), dtype=np.float32)
    out = np.zeros_like(x)
    try:
        run(Broken, x, out, config=RunConfig())
        raise AssertionError("expected a deadlock")
    except DeadlockError as err:
        text = str(err)
        assert "tile.tpop_from_aic" in text and "05_deadlock.py" in text, text
    run(Fixed, x, out, config=RunConfig())
    np.testing.assert_array_equal(out, x)
    print("OK")


if __name__ == "__main__":
    main()
