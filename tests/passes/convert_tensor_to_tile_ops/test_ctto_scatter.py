"""tensor.scatter along the last axis lowers to a values scatter, a hit-mask scatter and a select with the
input, so elements no index names keep the input; it runs numpy-equal to torch.scatter's rule."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.walks import preorder
from pypto.passes import convert_tensor_to_tile_ops
from pypto.runtime import RunConfig, run

RNG = np.random.default_rng(21)


@pl.program
class ScatterRows:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[2, 4], pl.INT32],
               s: pl.Tensor[[2, 4], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        y: pl.Tensor[[8, 16], pl.FP32] = pl.scatter(x, -1, i, s)
        return y


def test_scatter_is_two_scatters_and_a_select():
    body = convert_tensor_to_tile_ops()(ScatterRows).get_function("kernel").body
    ops = [n.op.name for n in preorder(body) if isinstance(n, Call) and not isinstance(n.op, GlobalVar)]
    assert ops.count("tile.scatter") == 2 and ops.count("tile.sel") == 1
    assert "tile.row_expand_add" in ops and not any(o.startswith("tensor.") for o in ops)


def _program(m, n, r, k, dtype):
    @pl.program
    class Scatter:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[m, n], dtype], idx: pl.Tensor[[r, k], pl.INT32], src: pl.Tensor[[r, k], dtype],
                 out: pl.Out[pl.Tensor[[m, n], dtype]]) -> pl.Tensor[[m, n], dtype]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.assemble(out, pl.scatter(x, -1, idx, src), [0, 0])
            return out
    return Scatter


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("dtype", [pl.FP32, pl.FP16])
def test_scatter_matches_numpy(platform, dtype):
    m, n, r, k = 16, 16, 4, 8
    npdt = dtype.to_numpy()
    x = RNG.standard_normal((m, n)).astype(npdt)
    # distinct columns per row, so the result does not depend on write order
    idx = np.stack([RNG.permutation(n)[:k] for _ in range(r)]).astype(np.int32)
    src = RNG.standard_normal((r, k)).astype(npdt)
    got = np.zeros((m, n), npdt)
    run(_program(m, n, r, k, dtype), config=RunConfig(platform=platform))(x, idx, src, got)
    want = x.copy()
    np.put_along_axis(want[:r], idx.astype(np.int64), src, 1)
    np.testing.assert_array_equal(got, want)
