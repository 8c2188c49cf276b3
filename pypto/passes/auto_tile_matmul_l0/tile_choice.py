"""The (m, n, k) L0 tile choice of AutoTileMatmulL0: the largest blocks whose Left [m, k], Right [k, n]
and Acc [m, n] fit the platform's L0A / L0B / L0C, picked by a Mat → L0 traffic cost model.

    choose_l0_tile(256, 256, 256, 4, 4, 4, a2a3)  →  e.g. (128, 128, 64): three buffers in their L0 spaces
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from pypto.ir.enums import MemorySpace

FRACTAL = 16                 # the cube's fractal edge: L0 tile dims are multiples of it
ITERATION_COST_BYTES = 4096  # per-iteration issue overhead of the cost model, in bytes of L1 → L0 traffic


def candidates(extent: int) -> list:
    """Tile sizes for one dim: multiples of 16 below the extent (a partial last block is peeled) and
    the extent itself."""
    return sorted({extent} | set(range(FRACTAL, extent, FRACTAL)))


def blocks(extent: int, size: int) -> int:
    return -(-extent // size)


def choose_l0_tile(M: int, N: int, K: int, bytes_a: int, bytes_b: int, bytes_c: int, platform) -> Optional[tuple]:
    """(m, n, k) whose Left [m, k], Right [k, n] and Acc [m, n] fit the platform's L0 buffers, with the
    least Mat → L0 traffic (A re-read per column block, B per row block) plus per-iteration overhead.
    A k that does not divide K needs a 16-aligned K (the peeled tail block is then 16-aligned too)."""
    return _best_tile(M, N, K, bytes_a, bytes_b, bytes_c, platform.space_capacity(MemorySpace.Left),
                      platform.space_capacity(MemorySpace.Right), platform.space_capacity(MemorySpace.Acc))


@lru_cache(maxsize=256)          # a pure search over ~10^5 candidates: a model compiles the same shapes again
def _best_tile(M: int, N: int, K: int, bytes_a: int, bytes_b: int, bytes_c: int, cap_a: int, cap_b: int,
               cap_c: int) -> Optional[tuple]:
    best = None
    ks = [(k, blocks(K, k)) for k in candidates(K) if not (K % k and K % FRACTAL)]
    ns = [(n, blocks(N, n)) for n in candidates(N)]
    for m in candidates(M):
        rows = blocks(M, m)
        for n, cols in ns:
            if m * n * bytes_c > cap_c:
                continue
            traffic = cols * M * K * bytes_a + rows * K * N * bytes_b
            for k, kblocks in ks:
                if m * k * bytes_a > cap_a or k * n * bytes_b > cap_b:
                    continue
                key = (traffic + rows * cols * kblocks * ITERATION_COST_BYTES, -(m * n * k))
                if best is None or key < best[0]:
                    best = (key, (m, n, k))
    return best[1] if best else None
