"""A loop carry updated by an elementwise op whose first operand comes from the cube (Acc) is a
vector value: the op reads a Vec copy of the operand (insert_operand_moves), so the carry must be
resolved to Vec too. Resolved from the unmoved operand it became an Acc carry that the loop body
never updated on the cube side — every iteration reused the initial value (found by the mutation
fuzzer: `l = pl.add(pl.row_sum(p), pl.mul(l, alpha))` in paged attention returned inf)."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig


def carried_row_sums(cube_first: bool):
    @pl.jit
    def kernel(q: pl.Tensor, k: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            total = pl.full([16, 1], dtype=pl.FP32, value=1.0)
            for j in pl.range(3):
                kj = pl.slice(k, [32, 64], [j * 32, 0])
                scores = pl.matmul(q, kj, b_trans=True, out_dtype=pl.FP32)
                if cube_first:
                    total = pl.add(pl.row_sum(scores), pl.mul(total, 0.5))
                else:
                    total = pl.add(pl.mul(total, 0.5), pl.row_sum(scores))
            out[0:16, :] = total
        return out
    return kernel


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("cube_first", [True, False])
def test_carry_fed_by_a_cube_value_is_updated_every_iteration(platform, cube_first):
    rng = np.random.default_rng(7)
    q = rng.standard_normal((16, 64)).astype(np.float32).astype(pl.BF16.to_numpy())
    k = rng.standard_normal((96, 64)).astype(np.float32).astype(pl.BF16.to_numpy())
    out = np.zeros((16, 1), np.float32)
    carried_row_sums(cube_first)(q, k, out, config=RunConfig(platform=platform))
    expected = np.ones((16, 1), np.float32)
    for j in range(3):
        s = q.astype(np.float32) @ k[j * 32:(j + 1) * 32].astype(np.float32).T
        expected = s.sum(axis=1, keepdims=True) + expected * 0.5
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)
