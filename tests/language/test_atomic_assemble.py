"""Split-K accumulation: `pl.assemble(c, partial, [0, 0], atomic=pl.AtomicType.Add)` adds each core's
partial product into the GM tensor (an atomic store), correct under random schedules on both sims,
and spelled as an atomic TSTORE in the PTO text."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.codegen.pto import generate
from pypto.errors import PyptoError
from pypto.runtime import RunConfig

M, N, K, SPLIT = 32, 32, 128, 4
KS = K // SPLIT


@pl.jit
def split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        c = pl.assemble(c, pl.full([M, N], dtype=pl.FP32, value=0.0), [0, 0])
    for ks in pl.parallel(0, SPLIT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="part"):
            k0 = ks * KS
            partial = pl.matmul(a[:, k0:k0 + KS], b[k0:k0 + KS, :], out_dtype=pl.FP32)
            c = pl.assemble(c, partial, [0, 0], atomic=pl.AtomicType.Add)
    return c


def _inputs():
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    return a, b


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_k_atomic_accumulation_matches_numpy_under_random_schedules(platform, seed):
    a, b = _inputs()
    c = np.full((M, N), np.nan, np.float32)
    split_k(a, b, c, config=RunConfig(platform=platform, sim_schedule="random", sim_seed=seed))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_the_partial_store_is_an_atomic_tstore():
    a, b = _inputs()
    c = np.zeros((M, N), np.float32)
    lowered = split_k.lower(a, b, c, config=RunConfig())
    texts = generate(lowered)
    atomic = [name for name, t in texts.items() if "atomic_type atomic_add" in t]
    assert atomic and all("pto.tstore" in texts[n] for n in atomic)
    assert not any("atomic_add" in t for n, t in texts.items() if "zero" in n)


def test_atomic_assemble_into_a_tile_is_a_clear_error():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) \
                -> pl.Tensor[[32, 16], pl.FP32]:
            big = pl.tensor.create([32, 16], dtype=pl.FP32)
            big = pl.assemble(big, pl.add(x, x), [0, 0], atomic=pl.AtomicType.Add)
            out = pl.assemble(out, big, [0, 0])
            return out

    with pytest.raises(PyptoError, match="into an on-chip tile is not supported"):
        ir.compile(P)
