"""Flash-attention-style online softmax: attention over K / V blocks without the full score matrix.

out = softmax(Q K^T * scale) V, computed block by block over the sequence. Each step keeps a
running row max `m`, a running denominator `l` and an unnormalised output `o`:
  s     = Q @ K_blk^T * scale
  m_new = max(m, rowmax(s));   p = exp(s - m_new);   alpha = exp(m - m_new)
  l     = l * alpha + rowsum(p)
  o     = o * alpha + p @ V_blk
and the result is o / l. Only one block of scores exists at a time.

Each step is three tasks: the scores (cube), the softmax update (vector), and the output
update (a mixed kernel: cube matmul, vector rescale). The orchestration loop issues them;
their order comes from the GM tensors they share (`s`, `p`, `alpha`, `m`, `l`, `o`).

What it shows:
  - `pl.matmul(q, k, b_trans=True)` (Q K^T without materialising K^T);
  - an orchestration-level `pl.range` loop issuing compute regions, state kept in GM tensors
    made with `pl.create_tensor` and updated with `t[:] = ...`.

Run:  python examples/models/02_flash_attention.py
"""

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

M, S, D, BLOCK = 16, 64, 32, 16
SCALE = float(1.0 / np.sqrt(D))


@pl.jit
def flash_attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, out: pl.Out[pl.Tensor]):
    m = pl.create_tensor([M, 1], dtype=pl.FP32)
    l = pl.create_tensor([M, 1], dtype=pl.FP32)
    o = pl.create_tensor([M, D], dtype=pl.FP32)
    s = pl.create_tensor([M, BLOCK], dtype=pl.FP32)
    p = pl.create_tensor([M, BLOCK], dtype=pl.FP32)
    alpha = pl.create_tensor([M, 1], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="init"):
        m[:] = pl.full([M, 1], dtype=pl.FP32, value=-1e30)
        l[:] = pl.full([M, 1], dtype=pl.FP32, value=0.0)
        o[:] = pl.full([M, D], dtype=pl.FP32, value=0.0)
    for j in pl.range(S // BLOCK):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
            s[:] = pl.matmul(q, pl.slice(k, [BLOCK, D], [j * BLOCK, 0]), b_trans=True, out_dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_update"):
            scaled = pl.mul(s, SCALE)
            m_new = pl.maximum(m, pl.row_max(scaled))
            e = pl.exp(pl.row_expand_sub(scaled, m_new))
            a = pl.exp(pl.sub(m, m_new))
            p[:] = e
            alpha[:] = a
            l[:] = pl.add(pl.mul(l, a), pl.row_sum(e))
            m[:] = m_new
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="output_update"):
            pv = pl.matmul(p, pl.slice(v, [BLOCK, D], [j * BLOCK, 0]), out_dtype=pl.FP32)
            o[:] = pl.add(pl.row_expand_mul(o, alpha), pv)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="normalize"):
        out[:] = pl.row_expand_div(o, l)
    return out


def reference(q, k, v):
    scores = q @ k.T * SCALE
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def main():
    rng = np.random.default_rng(40)
    q = rng.standard_normal((M, D), dtype=np.float32)
    k = rng.standard_normal((S, D), dtype=np.float32)
    v = rng.standard_normal((S, D), dtype=np.float32)
    out = np.zeros((M, D), np.float32)
    flash_attention(q, k, v, out, config=RunConfig())
    np.testing.assert_allclose(out, reference(q, k, v), rtol=1e-4, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
