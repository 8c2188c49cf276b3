"""One Qwen3 decode layer: a batch of single-token requests through attention and MLP, with a KV cache.

For each request b at position pos = ctx[b] - 1 (hidden state x_b, BF16):
  h   = RMSNorm(x) * w_in;   q = h Wq,  k = h Wk,  v = h Wv          (cube, FP32 accumulation)
  q, k rotated by RoPE at pos (each head's halves: [lo, hi] → [lo c - hi s, hi c + lo s])
  k, v written into the cache at row pos of their KV head
  each group of Q_PER_KV query heads attends to its KV head's rows [0, ctx[b])  (GQA, online softmax)
  r   = x + attn Wo;   g = RMSNorm(r) * w_post
  out = r + (silu(g Wg) * (g Wu)) Wd                                   (SwiGLU MLP)
Weights are BF16; activations go to the cube as BF16 and accumulate in FP32, as on the chip.

What it shows:
  - `@pl.jit.inline` building blocks (a K-chunked projection with a fused epilogue, RMSNorm)
    reused at several call sites with different shapes, each specialized where it is called;
  - `pl.matmul` / `pl.matmul_acc` over K chunks, parallel over N chunks (`pl.parallel`);
  - the KV cache written in place (slice assignment into `pl.InOut` arguments), attention over a
    run-time context length with the last block masked (a `pl.arange` column index row).

Run:  python examples/models/05_qwen3_decode_layer.py      (reduced size; bench/models.py runs
      Qwen3-32B's: batch 16, hidden 8192, 64 / 8 heads, head dim 128, intermediate 25600)
"""

from dataclasses import dataclass

import ml_dtypes
import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig

BF16 = ml_dtypes.bfloat16
EPS = 1e-6


@dataclass(frozen=True)
class Sizes:
    batch: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    max_seq: int
    k_chunk: int = 128           # projection K chunk
    n_chunk: int = 256           # projection N chunk (one task each)
    seq_tile: int = 128          # attention block of cached positions


SMALL = Sizes(batch=16, hidden=512, heads=8, kv_heads=2, head_dim=64, intermediate=768, max_seq=256,
              n_chunk=128, seq_tile=64)
FULL = Sizes(batch=16, hidden=8192, heads=64, kv_heads=8, head_dim=128, intermediate=25600, max_seq=4096,
             seq_tile=256)


def build(sz: Sizes):
    """The @pl.jit layer for these sizes (compile-time constants of its body)."""
    B, HID, NH, NKV, HD, INTER, MAXS = (sz.batch, sz.hidden, sz.heads, sz.kv_heads, sz.head_dim, sz.intermediate,
                                        sz.max_seq)
    KC, NC, ST = sz.k_chunk, sz.n_chunk, sz.seq_tile
    KVH = NKV * HD
    GROUP = NH // NKV
    HALF = HD // 2
    scale = float(1.0 / np.sqrt(HD))
    inv_hidden = 1.0 / HID

    @pl.jit.inline
    def rmsnorm(x: pl.Tensor, weight: pl.Tensor, y: pl.Out[pl.Tensor]):
        """y = x / sqrt(mean(x^2) + eps) * weight, as BF16 (the next matmul's operand)."""
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rmsnorm"):
            sq = pl.full([B, 1], dtype=pl.FP32, value=0.0)
            for kb in pl.range(HID // KC):
                xs = pl.cast(x[:, kb * KC:(kb + 1) * KC], target_type=pl.FP32)
                sq = pl.add(sq, pl.row_sum(pl.mul(xs, xs)))
            inv = pl.rsqrt(pl.adds(pl.mul(sq, inv_hidden), EPS))
            for kb in pl.range(HID // KC):
                xs = pl.cast(x[:, kb * KC:(kb + 1) * KC], target_type=pl.FP32)
                ws = weight[:, kb * KC:(kb + 1) * KC]
                y[:, kb * KC:(kb + 1) * KC] = pl.cast(pl.col_expand_mul(pl.row_expand_mul(xs, inv), ws),
                                                      target_type=pl.BF16)
        return y

    @pl.jit.inline
    def project(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
        """y = x @ w (FP32), one task per NC columns, K accumulated in chunks of KC."""
        n_out = w.shape[1]
        k_in = w.shape[0]
        for n0 in pl.parallel(0, n_out, NC):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="project"):
                acc = pl.matmul(x[:, 0:KC], w[0:KC, n0:n0 + NC], out_dtype=pl.FP32)
                for kb in pl.range(1, k_in // KC):
                    acc = pl.matmul_acc(acc, x[:, kb * KC:(kb + 1) * KC], w[kb * KC:(kb + 1) * KC, n0:n0 + NC])
                y[:, n0:n0 + NC] = acc
        return y

    @pl.jit
    def qwen3_decode_layer(hidden: pl.Tensor, w_in: pl.Tensor, wq: pl.Tensor, wk: pl.Tensor, wv: pl.Tensor,
                           ctx_lens: pl.Tensor, rope_cos: pl.Tensor, rope_sin: pl.Tensor,
                           k_cache: pl.InOut[pl.Tensor], v_cache: pl.InOut[pl.Tensor], wo: pl.Tensor,
                           w_post: pl.Tensor, w_gate: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor,
                           out: pl.Out[pl.Tensor]):
        normed = pl.create_tensor([B, HID], dtype=pl.BF16)
        normed = rmsnorm(hidden, w_in, normed)
        q = pl.create_tensor([B, NH * HD], dtype=pl.FP32)
        k = pl.create_tensor([B, KVH], dtype=pl.FP32)
        v = pl.create_tensor([B, KVH], dtype=pl.FP32)
        q = project(normed, wq, q)
        k = project(normed, wk, k)
        v = project(normed, wv, v)

        # RoPE on q and k at each request's position; k and v go into the cache there
        q_rot = pl.create_tensor([B * NH, HD], dtype=pl.BF16)
        for b in pl.parallel(B):
            pos = pl.read(ctx_lens, [b]) - 1
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rope"):
                cos_lo, cos_hi = rope_cos[pos:pos + 1, 0:HALF], rope_cos[pos:pos + 1, HALF:HD]
                sin_lo, sin_hi = rope_sin[pos:pos + 1, 0:HALF], rope_sin[pos:pos + 1, HALF:HD]
                for h in pl.range(NKV):
                    lo, hi = k[b:b + 1, h * HD:h * HD + HALF], k[b:b + 1, h * HD + HALF:(h + 1) * HD]
                    row = (b * NKV + h) * MAXS + pos
                    k_cache[row:row + 1, 0:HALF] = pl.cast(
                        pl.sub(pl.col_expand_mul(lo, cos_lo), pl.col_expand_mul(hi, sin_lo)), target_type=pl.BF16)
                    k_cache[row:row + 1, HALF:HD] = pl.cast(
                        pl.add(pl.col_expand_mul(hi, cos_hi), pl.col_expand_mul(lo, sin_hi)), target_type=pl.BF16)
                    v_cache[row:row + 1, :] = pl.cast(v[b:b + 1, h * HD:(h + 1) * HD], target_type=pl.BF16)
                for h in pl.range(NH):
                    lo, hi = q[b:b + 1, h * HD:h * HD + HALF], q[b:b + 1, h * HD + HALF:(h + 1) * HD]
                    r = b * NH + h
                    q_rot[r:r + 1, 0:HALF] = pl.cast(
                        pl.sub(pl.col_expand_mul(lo, cos_lo), pl.col_expand_mul(hi, sin_lo)), target_type=pl.BF16)
                    q_rot[r:r + 1, HALF:HD] = pl.cast(
                        pl.add(pl.col_expand_mul(hi, cos_hi), pl.col_expand_mul(lo, sin_hi)), target_type=pl.BF16)

        # grouped-query attention: GROUP query heads per KV head, online softmax over ST positions
        attn = pl.create_tensor([B, NH * HD], dtype=pl.BF16)
        for b in pl.parallel(B):
            ctx = pl.cast(pl.read(ctx_lens, [b]), pl.INDEX)
            n_tiles = (ctx + ST - 1) // ST
            for h in pl.parallel(NKV):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="attention"):
                    qg = q_rot[(b * NH + h * GROUP):(b * NH + (h + 1) * GROUP), :]
                    m = pl.full([GROUP, 1], dtype=pl.FP32, value=-1e30)
                    l = pl.full([GROUP, 1], dtype=pl.FP32, value=0.0)
                    o = pl.full([GROUP, HD], dtype=pl.FP32, value=0.0)
                    base = (b * NKV + h) * MAXS
                    for t in pl.range(n_tiles):
                        kt = pl.slice(k_cache, [ST, HD], [base + t * ST, 0])
                        vt = pl.slice(v_cache, [ST, HD], [base + t * ST, 0])   # rows past ctx meet p = 0
                        scores = pl.mul(pl.matmul(qg, kt, b_trans=True, out_dtype=pl.FP32), scale)
                        # columns past the context (c >= ctx - t * ST) drop by 1e30: exp gives 0
                        past = pl.cast(pl.arange(pl.cast(t * ST - ctx, pl.INT32), [1, ST]), target_type=pl.FP32)
                        masked = pl.minimum(pl.maximum(pl.mul(pl.add(past, 0.5), 2.0), 0.0), 1.0)
                        s = pl.col_expand_sub(scores, pl.mul(masked, 1e30))
                        m_new = pl.maximum(m, pl.row_max(s))
                        p = pl.exp(pl.row_expand_sub(s, m_new))
                        alpha = pl.exp(pl.sub(m, m_new))
                        l = pl.add(pl.mul(l, alpha), pl.row_sum(p))
                        pv = pl.matmul(pl.cast(p, target_type=pl.BF16), vt, out_dtype=pl.FP32)
                        o = pl.add(pl.row_expand_mul(o, alpha), pv)
                        m = m_new
                    o = pl.cast(pl.row_expand_div(o, l), target_type=pl.BF16)
                    for g in pl.range(GROUP):
                        col = (h * GROUP + g) * HD
                        attn[b:b + 1, col:col + HD] = o[g:g + 1, :]

        # output projection + residual, post-norm, SwiGLU MLP + residual
        proj = pl.create_tensor([B, HID], dtype=pl.FP32)
        proj = project(attn, wo, proj)
        resid = pl.create_tensor([B, HID], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="residual"):
            for kb in pl.range(HID // KC):
                resid[:, kb * KC:(kb + 1) * KC] = pl.add(proj[:, kb * KC:(kb + 1) * KC],
                                                         pl.cast(hidden[:, kb * KC:(kb + 1) * KC],
                                                                 target_type=pl.FP32))
        resid_bf = pl.create_tensor([B, HID], dtype=pl.BF16)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="resid_bf16"):
            for kb in pl.range(HID // KC):
                resid_bf[:, kb * KC:(kb + 1) * KC] = pl.cast(resid[:, kb * KC:(kb + 1) * KC], target_type=pl.BF16)
        post = pl.create_tensor([B, HID], dtype=pl.BF16)
        post = rmsnorm(resid_bf, w_post, post)
        gate = pl.create_tensor([B, INTER], dtype=pl.FP32)
        up = pl.create_tensor([B, INTER], dtype=pl.FP32)
        gate = project(post, w_gate, gate)
        up = project(post, w_up, up)
        act = pl.create_tensor([B, INTER], dtype=pl.BF16)
        for n0 in pl.parallel(0, INTER, NC):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="swiglu"):
                gt = gate[:, n0:n0 + NC]
                sig = pl.recip(pl.adds(pl.exp(pl.neg(gt)), 1.0))
                act[:, n0:n0 + NC] = pl.cast(pl.mul(pl.mul(gt, sig), up[:, n0:n0 + NC]), target_type=pl.BF16)
        down = pl.create_tensor([B, HID], dtype=pl.FP32)
        down = project(act, w_down, down)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="output"):
            for kb in pl.range(HID // KC):
                out[:, kb * KC:(kb + 1) * KC] = pl.cast(pl.add(down[:, kb * KC:(kb + 1) * KC],
                                                               resid[:, kb * KC:(kb + 1) * KC]), target_type=pl.BF16)
        return out

    return qwen3_decode_layer


qwen3_decode_layer = build(SMALL)          # the reduced-size kernel (main() runs it; `pypto compile` finds it)


def make_inputs(sz: Sizes, seed: int = 0) -> dict:
    """Random weights (scaled so activations stay O(1)), a filled KV cache, per-request positions."""
    rng = np.random.default_rng(seed)
    B, HID, HD = sz.batch, sz.hidden, sz.head_dim

    def weight(k, n):
        return (rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k)).astype(BF16)

    ctx = np.array([sz.max_seq - 1 - (b * 37) % (sz.max_seq // 2) for b in range(B)], np.int32)
    inv_freq = 1.0 / (1e6 ** (np.arange(0, HD, 2) / HD))
    angles = np.outer(np.arange(sz.max_seq), inv_freq)
    rows = B * sz.kv_heads * sz.max_seq
    return {
        "hidden": rng.standard_normal((B, HID), dtype=np.float32).astype(BF16),
        "w_in": (1.0 + 0.1 * rng.standard_normal((1, HID))).astype(np.float32),
        "wq": weight(HID, sz.heads * HD), "wk": weight(HID, sz.kv_heads * HD), "wv": weight(HID, sz.kv_heads * HD),
        "ctx_lens": ctx,
        "rope_cos": np.cos(np.concatenate([angles, angles], axis=1)).astype(np.float32),
        "rope_sin": np.sin(np.concatenate([angles, angles], axis=1)).astype(np.float32),
        "k_cache": rng.standard_normal((rows, HD), dtype=np.float32).astype(BF16),
        "v_cache": rng.standard_normal((rows, HD), dtype=np.float32).astype(BF16),
        "wo": weight(sz.heads * HD, HID),
        "w_post": (1.0 + 0.1 * rng.standard_normal((1, HID))).astype(np.float32),
        "w_gate": weight(HID, sz.intermediate), "w_up": weight(HID, sz.intermediate),
        "w_down": weight(sz.intermediate, HID),
    }


def make_output(sz: Sizes) -> np.ndarray:
    return np.zeros((sz.batch, sz.hidden), BF16)


def _bf16(x):
    return x.astype(BF16).astype(np.float32)


def reference(sz: Sizes, hidden, w_in, wq, wk, wv, ctx_lens, rope_cos, rope_sin, k_cache, v_cache, wo, w_post,
              w_gate, w_up, w_down) -> np.ndarray:
    """The layer in float32 numpy, rounding to BF16 where the kernel hands BF16 to the cube. Works on
    copies of the caches (the kernel writes its own)."""
    B, HD, NKV, GROUP = sz.batch, sz.head_dim, sz.kv_heads, sz.heads // sz.kv_heads
    f = np.float32

    def rmsnorm(x, w):
        return _bf16(x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * w)

    def rope(x, pos):                                # x [heads, HD] at one position
        lo, hi = x[:, :HD // 2], x[:, HD // 2:]
        c, s = rope_cos[pos], rope_sin[pos]
        return np.concatenate([lo * c[:HD // 2] - hi * s[:HD // 2], hi * c[HD // 2:] + lo * s[HD // 2:]], axis=1)

    x = hidden.astype(f)
    h = rmsnorm(x, w_in)
    q, k, v = h @ wq.astype(f), h @ wk.astype(f), h @ wv.astype(f)
    kc = k_cache.astype(f).reshape(B, NKV, sz.max_seq, HD)
    vc = v_cache.astype(f).reshape(B, NKV, sz.max_seq, HD)
    attn = np.zeros((B, sz.heads * HD), f)
    for b in range(B):
        pos = int(ctx_lens[b]) - 1
        kc[b, :, pos] = _bf16(rope(k[b].reshape(NKV, HD), pos))
        vc[b, :, pos] = _bf16(v[b].reshape(NKV, HD))
        qb = _bf16(rope(q[b].reshape(sz.heads, HD), pos))
        for g in range(NKV):
            s = qb[g * GROUP:(g + 1) * GROUP] @ kc[b, g, :pos + 1].T / np.sqrt(HD)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            attn[b, g * GROUP * HD:(g + 1) * GROUP * HD] = ((e / e.sum(axis=1, keepdims=True)) @ vc[b, g, :pos + 1]).reshape(-1)
    resid = _bf16(attn) @ wo.astype(f) + x
    g = rmsnorm(_bf16(resid), w_post)
    gate, up = g @ w_gate.astype(f), g @ w_up.astype(f)
    act = _bf16(gate / (1 + np.exp(-gate)) * up)
    return (act @ w_down.astype(f) + resid).astype(BF16)


def run(sz: Sizes, config: RunConfig | None = None):
    """(kernel output, golden) for random inputs of these sizes."""
    inputs = make_inputs(sz)
    golden = reference(sz, **inputs)
    out = make_output(sz)
    kernel = qwen3_decode_layer if sz == SMALL else build(sz)
    kernel(*inputs.values(), out, config=config or RunConfig())
    return out, golden


def check(out, golden) -> None:
    """Within BF16 tolerance of the golden (relative to the output's scale)."""
    o, g = out.astype(np.float32), golden.astype(np.float32)
    rel = np.abs(o - g).max() / np.abs(g).max()
    assert rel < 2e-2, f"max error {rel:.3g} of the output's scale"


def main():
    out, golden = run(SMALL)
    check(out, golden)
    print("OK")


if __name__ == "__main__":
    main()
