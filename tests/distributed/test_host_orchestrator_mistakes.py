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


def _rank_of(ctx_expression: str):
    """A program whose kernel asks pld.rank of `ctx_expression` (ctx: the real context, n: an INT64 number)."""
    return pl.parse(f"""
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class RankOfSomething:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[1, {C}], pl.FP32]],
               data: pld.DistributedTensor[[1, {C}], pl.FP32]) -> pl.Tensor[[1, {C}], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        n: pl.Scalar[pl.INT64] = pl.cast(pld.nranks(ctx), pl.INT64)
        me = pld.rank({ctx_expression})
        tag: pl.Scalar[pl.FP32] = pl.cast(me, pl.FP32)
        y = pl.store(pl.add(pl.load(x, [0, 0], [1, {C}]), tag), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[1, {C}], pl.FP32]],
                 data: pld.DistributedTensor[[1, {C}], pl.FP32]) -> pl.Tensor[[1, {C}], pl.FP32]:
        return self.kernel(x, y, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[{N}, 1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[{N}, 1, {C}], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, {C}], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = pld.window(buf, [1, {C}], dtype=pl.FP32)
            self.per_rank(x[r], y[r], data, device=r)
""")


RANK_OF_LINE = 12                             # `me = pld.rank(...)` in _rank_of's program


def test_the_rank_of_a_constant_is_a_compile_time_error():
    with pytest.raises(TypeCheckError, match="pld.rank: argument 'ctx' must be a communication context, got the "
                                             "constant 16") as info:
        _rank_of(str(C))
    assert info.value.span.line == RANK_OF_LINE


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_rank_of_a_number_is_an_error_at_run_time(platform):
    compiled = ir.compile(_rank_of("n"), platform=platform,
                          distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.ones((N, 1, C), np.float32)
    with pytest.raises(TypeCheckError, match="pld.rank: expects a communication context, got int 2") as info:
        compiled(x, np.zeros_like(x))
    assert info.value.span.line == RANK_OF_LINE


def test_the_rank_of_the_context_runs():
    compiled = ir.compile(_rank_of("ctx"), platform="a2a3sim",
                          distributed_config=DistributedConfig(device_ids=list(range(N))))
    x = np.ones((N, 1, C), np.float32)
    y = np.zeros_like(x)
    compiled(x, y)
    np.testing.assert_array_equal(y[:, 0, 0], [1.0 + r for r in range(N)])


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
