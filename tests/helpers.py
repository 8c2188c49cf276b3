"""Helpers shared by the test suite (import as `from tests.helpers import op_names, f16, matmul_ref`).

    names = op_names(lowered["k"])                   # ["tile.load", "tile.add", "tile.store"]
    a, b = f16(rng, 16, 32), f16(rng, 32, 16)
    np.testing.assert_allclose(c, matmul_ref(a, b), rtol=1e-5, atol=1e-5)
"""

from __future__ import annotations

import numpy as np

from pypto import ir
from pypto.ir.visitor import collect


def op_calls(node, name: str | None = None) -> list:
    """The op calls (not calls of program functions) under `node` — a Function's body, or any IR node —
    in pre-order; only those of op `name` when given."""
    body = node.body if isinstance(node, ir.Function) else node
    return collect(body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                   and (name is None or n.op.name == name))


def op_names(node) -> list:
    """The op names of `op_calls(node)`, in order."""
    return [c.op.name for c in op_calls(node)]


def uniform(rng: np.random.Generator, *shape, dtype=np.float32, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """Uniform values in [low, high) of `shape`, cast to `dtype`."""
    return rng.uniform(low, high, shape).astype(dtype)


def f16(rng: np.random.Generator, *shape) -> np.ndarray:
    """A float16 matmul operand in [-1, 1)."""
    return uniform(rng, *shape, dtype=np.float16)


def matmul_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cube's product: operands widened to float32, accumulated in float32."""
    return a.astype(np.float32) @ b.astype(np.float32)
