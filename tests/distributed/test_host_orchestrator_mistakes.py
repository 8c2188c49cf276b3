"""Mistakes with a distributed program's run-time values (ranks, comm contexts) end as pypto errors at the user's
line, not as Python errors inside the simulator."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import InternalError, PyptoError, TypeCheckError
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


@pl.program
class ArithmeticOnACommContext:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
               data: pld.DistributedTensor[[1, C], pl.FP32]) -> pl.Tensor[[1, C], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        me = pld.rank(ctx)
        tag: pl.Scalar[pl.FP32] = pl.cast(me + ctx, pl.FP32)          # CTX-ARITHMETIC
        y = pl.store(pl.add(pl.load(x, [0, 0], [1, C]), tag), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
                 data: pld.DistributedTensor[[1, C], pl.FP32]) -> pl.Tensor[[1, C], pl.FP32]:
        return self.kernel(x, y, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[N, 1, C], pl.FP32], y: pl.Out[pl.Tensor[[N, 1, C], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, C], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = pld.window(buf, [1, C], dtype=pl.FP32)
            self.per_rank(x[r], y[r], data, device=r)


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


@pytest.mark.parametrize("program, marker, error, message", [
    (IndexedByAWindowBuffer, "WINDOW-INDEX", TypeCheckError, "indexes a stacked host tensor by rank, got WindowBuffer"),
    (ArithmeticOnACommContext, "CTX-ARITHMETIC", PyptoError, r"a communication context \(pld.get_comm_ctx\) is a "
                                                             "handle, not a number"),
])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_run_time_value_misused_is_an_error_at_its_line(program, marker, error, message, platform):
    compiled = ir.compile(program, platform=platform, distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.ones((N, 1, C), np.float32)
    with pytest.raises(error, match=message) as info:
        compiled(x, np.zeros_like(x))
    assert not isinstance(info.value, InternalError)
    assert info.value.span.filename == __file__ and info.value.span.line == _line(marker)
