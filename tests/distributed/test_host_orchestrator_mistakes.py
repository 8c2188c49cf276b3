"""Mistakes in a HOST orchestrator's Python-level values end as pypto errors at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import InternalError, TypeCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig

N, C = 2, 16


@pl.program
class IndexedByAWindowBuffer:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_k(self, x: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]]) -> pl.Tensor[[1, C], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [1, C]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def copy(self, x: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]]) -> pl.Tensor[[1, C], pl.FP32]:
        return self.copy_k(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.copy(x[r], y[buf], device=r)            # WINDOW-INDEX


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_stacked_host_tensor_indexed_by_a_window_buffer_is_an_error_at_the_subscript(platform):
    compiled = ir.compile(IndexedByAWindowBuffer, platform=platform,
                          distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.ones((N, 1, C), np.float32)
    with pytest.raises(TypeCheckError, match="indexes a stacked host tensor by rank, got WindowBuffer") as info:
        compiled(x, np.zeros_like(x))
    assert not isinstance(info.value, InternalError)
    assert info.value.span.filename == __file__ and info.value.span.line == _line("WINDOW-INDEX")
