"""Paged attention for decode: each request's keys and values live in fixed-size blocks of a shared
cache, found through a block table, and each request has its own context length.

For request b, the H query heads attend to the first ctx[b] cached positions. Position p lives in
physical block block_table[b, p // BS], row p % BS. One mixed kernel per request walks its blocks
with the online softmax of flash attention (running max m, denominator l, output o):
  s = q K_blk^T * scale          (cube)      the last block's columns past ctx[b] are masked to -inf
  m' = max(m, rowmax(s));  p = exp(s - m');  alpha = exp(m - m')
  l = l * alpha + rowsum(p);   o = o * alpha + p V_blk   (vector, cube)
and writes o / l. The block count is a run-time value, so one compiled program serves every
context length up to the table's width.

What it shows:
  - `pl.read(block_table, [i])` → a physical row, `pl.slice(cache, [BS, D], [row, 0])` on it;
  - the last block's positions past the context masked with `pl.arange` (a column index row): their
    scores drop by 1e30, so exp gives 0;
  - one `pl.at` region mixing cube and vector work inside a run-time loop: the compiler splits it
    into an AIC and an AIV kernel talking through pipes, one task per request (`pl.parallel`).

Run:  python examples/models/04_paged_attention.py      (reduced size; bench/models.py runs the full one:
      batch 64, 16 heads, head dim 128, block 128, context 8192, max model length 32768)
"""

from dataclasses import dataclass

import ml_dtypes
import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

BF16 = ml_dtypes.bfloat16


@dataclass(frozen=True)
class Sizes:
    batch: int
    heads: int
    head_dim: int
    block: int
    context: int            # the longest context length of the run
    max_model_len: int      # the block table's width is max_model_len // block

    @property
    def max_blocks(self) -> int:
        return self.max_model_len // self.block


SMALL = Sizes(batch=4, heads=16, head_dim=64, block=32, context=200, max_model_len=512)
FULL = Sizes(batch=64, heads=16, head_dim=128, block=128, context=8192, max_model_len=32768)


def build(sz: Sizes):
    """The @pl.jit kernel for these sizes (they are compile-time constants of its body)."""
    B, H, D, BS, MAXB = sz.batch, sz.heads, sz.head_dim, sz.block, sz.max_blocks
    scale = float(1.0 / np.sqrt(D))

    @pl.jit
    def paged_attention(query: pl.Tensor, key_cache: pl.Tensor, value_cache: pl.Tensor, block_table: pl.Tensor,
                        context_lens: pl.Tensor, out: pl.Out[pl.Tensor]):
        for b in pl.parallel(B):
            ctx = pl.cast(pl.read(context_lens, [b]), pl.INDEX)
            n_blocks = (ctx + BS - 1) // BS
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="attend"):
                q = pl.slice(query, [H, D], [b * H, 0])
                m = pl.full([H, 1], dtype=pl.FP32, value=-1e30)
                l = pl.full([H, 1], dtype=pl.FP32, value=0.0)
                o = pl.full([H, D], dtype=pl.FP32, value=0.0)
                for j in pl.range(n_blocks):
                    row = pl.read(block_table, [b * MAXB + j]) * BS
                    k = pl.slice(key_cache, [BS, D], [row, 0])
                    v = pl.slice(value_cache, [BS, D], [row, 0])
                    scores = pl.mul(pl.matmul(q, k, b_trans=True, out_dtype=pl.FP32), scale)
                    # position j * BS + c is past the context when c - (ctx - j * BS) >= 0: those
                    # columns get -1e30 (exp → 0); only the last block has any
                    past = pl.cast(pl.arange(pl.cast(j * BS - ctx, pl.INT32), [1, BS]), target_type=pl.FP32)
                    masked = pl.minimum(pl.maximum(pl.mul(pl.add(past, 0.5), 2.0), 0.0), 1.0)
                    s = pl.col_expand_sub(scores, pl.mul(masked, 1e30))
                    m_new = pl.maximum(m, pl.row_max(s))
                    p = pl.exp(pl.row_expand_sub(s, m_new))
                    alpha = pl.exp(pl.sub(m, m_new))
                    l = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                    pv = pl.matmul(pl.cast(p, target_type=pl.BF16), v, out_dtype=pl.FP32)
                    o = pl.add(pl.row_expand_mul(o, alpha), pv)
                    m = m_new
                out[b * H:(b + 1) * H, :] = pl.row_expand_div(o, l)
        return out

    return paged_attention


paged_attention = build(SMALL)          # the reduced-size kernel (main() runs it; `pypto compile` finds it)


def make_inputs(sz: Sizes, seed: int = 0) -> dict:
    """Random queries and a cache holding just the blocks the requests use, in shuffled order."""
    rng = np.random.default_rng(seed)
    B, H, D, BS = sz.batch, sz.heads, sz.head_dim, sz.block
    # the longest context, an unaligned one, and lengths in between (at least one position each)
    ctx = np.array([sz.context - (b % 4) * (BS // 3 + 1) for b in range(B)], np.int32).clip(1, sz.context)
    used = (ctx + BS - 1) // BS
    pool = int(used.sum())
    table = np.zeros((B, sz.max_blocks), np.int32)
    table[np.arange(sz.max_blocks)[None, :] < used[:, None]] = rng.permutation(pool).astype(np.int32)
    return {
        "query": rng.standard_normal((B * H, D)).astype(BF16),
        "key_cache": rng.standard_normal((pool * BS, D)).astype(BF16),
        "value_cache": rng.standard_normal((pool * BS, D)).astype(BF16),
        "block_table": table.reshape(-1),
        "context_lens": ctx,
    }


def reference(sz: Sizes, query, key_cache, value_cache, block_table, context_lens) -> np.ndarray:
    """Softmax attention over each request's gathered positions, in float32."""
    H, BS = sz.heads, sz.block
    table = block_table.reshape(sz.batch, sz.max_blocks)
    out = np.zeros((sz.batch * H, sz.head_dim), np.float32)
    for b, n in enumerate(context_lens):
        pos = np.arange(n)
        rows = table[b, pos // BS] * BS + pos % BS
        k, v = key_cache[rows].astype(np.float32), value_cache[rows].astype(np.float32)
        s = query[b * H:(b + 1) * H].astype(np.float32) @ k.T / np.sqrt(sz.head_dim)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[b * H:(b + 1) * H] = (e / e.sum(axis=1, keepdims=True)) @ v
    return out


def make_output(sz: Sizes) -> np.ndarray:
    return np.zeros((sz.batch * sz.heads, sz.head_dim), np.float32)


def run(sz: Sizes, config: RunConfig | None = None):
    """(kernel output, golden) for random inputs of these sizes."""
    inputs = make_inputs(sz)
    out = make_output(sz)
    kernel = paged_attention if sz == SMALL else build(sz)
    kernel(*inputs.values(), out, config=config or RunConfig())
    return out, reference(sz, **inputs)


def check(out, golden) -> None:
    # p is rounded to BF16 before the second matmul, as on the chip
    np.testing.assert_allclose(out, golden, rtol=2e-2, atol=2e-2)


def main():
    out, golden = run(SMALL)
    check(out, golden)
    print("OK")


if __name__ == "__main__":
    main()
