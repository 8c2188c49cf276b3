"""A Vec left operand on a5 end to end: AutoTileMatmulL0 stages it through Mat (a5's Vec → Mat path),
ExpandMixedKernel turns that move into the V→C transfer (AIV tpush_to_aic, AIC tpop_from_aiv into Mat)
and the K loop's Left / Right extracts run on the cube, next to the Mat operand loaded there.
a2a3 has no Vec → Mat path: the operand goes to Left whole and its capacity error stays."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CapacityError
from pypto.ir.enums import FunctionType
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program
from tests.helpers import op_names


@pl.program
class VecLeft:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 512], pl.FP32], v: pl.Tensor[[512, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        xt: pl.Tile[[64, 512], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [64, 512])
        p: pl.Tile[[64, 512], pl.FP32, pl.Mem.Vec] = pl.exp(xt)
        p_left: pl.Tile[[64, 512], pl.FP32, pl.Mem.Left] = pl.move(p, target_memory=pl.Mem.Left)
        v_mat: pl.Tile[[512, 64], pl.FP32, pl.Mem.Mat] = pl.load(v, [0, 0], [512, 64], target_memory=pl.Mem.Mat)
        v_right: pl.Tile[[512, 64], pl.FP32, pl.Mem.Right] = pl.move(v_mat, target_memory=pl.Mem.Right)
        o: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(p_left, v_right)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.store(o, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 512], pl.FP32], v: pl.Tensor[[512, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out2 = self.k(x, v, out)
        return out2


def test_the_staged_vec_operand_crosses_to_the_cube_and_matches_numpy_on_a5sim():
    lowered = compile_program(VecLeft, platform="a5sim").lowered
    aic = next(f for f in lowered.functions.values() if f.func_type is FunctionType.AIC)
    aiv = next(f for f in lowered.functions.values() if f.func_type is FunctionType.AIV)
    assert "tile.tpush_to_aic" in op_names(aiv) and "tile.exp" in op_names(aiv)
    assert "tile.tpop_from_aiv" in op_names(aic)
    assert op_names(aic).count("tile.extract") == 2 and "tile.extract" not in op_names(aiv)   # the K loop is the cube's
    rng = np.random.default_rng(41)
    x = rng.standard_normal((64, 512), dtype=np.float32) * 0.25
    v = rng.standard_normal((512, 64), dtype=np.float32)
    out = np.zeros((64, 64), np.float32)
    run(VecLeft, x, v, out, config=RunConfig(platform="a5sim"))
    np.testing.assert_allclose(out, np.exp(x) @ v, rtol=1e-4, atol=1e-3)


def test_a2a3_without_a_vec_to_mat_path_keeps_the_left_capacity_error():
    with pytest.raises(CapacityError, match=r"Left \(L0A\) buffers need 131072 bytes"):
        compile_program(VecLeft, platform="a2a3sim")
