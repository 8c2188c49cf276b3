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


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


def _compiled(program, platform: str = "a2a3sim"):
    return ir.compile(program, platform=platform, distributed_config=DistributedConfig(device_ids=list(range(N))))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_stacked_host_tensor_indexed_by_a_window_buffer_is_an_error_at_the_subscript(platform):
    x = np.ones((N, 1, C), np.float32)
    with pytest.raises(TypeCheckError, match="indexes a stacked host tensor by rank, got WindowBuffer") as info:
        _compiled(IndexedByAWindowBuffer, platform)(x, np.zeros_like(x))
    assert not isinstance(info.value, InternalError)
    assert info.value.span.filename == __file__ and info.value.span.line == _line("WINDOW-INDEX")


def _tagged_by(tag_expression: str):
    """Each rank adds `tag_expression` to x (ctx: the comm context, me: pld.rank(ctx), n: an INT64 number)."""
    return pl.parse(f"""
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Tagged:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[1, {C}], pl.FP32]],
               data: pld.DistributedTensor[[1, {C}], pl.FP32]) -> pl.Tensor[[1, {C}], pl.FP32]:
        ctx = pld.get_comm_ctx(data)
        n: pl.Scalar[pl.INT64] = pl.cast(pld.nranks(ctx), pl.INT64)
        me = pld.rank(ctx)
        tag: pl.Scalar[pl.FP32] = pl.cast({tag_expression}, pl.FP32)
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


TAG_LINE = 13                                 # the `tag` line of _tagged_by's program


def _run(program, platform: str = "a2a3sim"):
    x = np.ones((N, 1, C), np.float32)
    y = np.zeros_like(x)
    _compiled(program, platform)(x, y)
    return y


def test_the_tag_of_the_rank_runs():
    np.testing.assert_array_equal(_run(_tagged_by("me"))[:, 0, 0], [1.0 + r for r in range(N)])
    np.testing.assert_array_equal(_run(_tagged_by("pld.rank(ctx) + pld.nranks(ctx)"))[:, 0, 0],
                                  [1.0 + r + N for r in range(N)])


def test_the_rank_of_a_constant_is_a_compile_time_error():
    with pytest.raises(TypeCheckError, match="pld.rank: argument 'ctx' must be a communication context, got the "
                                             f"constant {C}") as info:
        _tagged_by(f"pld.rank({C})")
    assert info.value.span.line == TAG_LINE


@pytest.mark.parametrize("expression, message", [
    ("pld.rank(n)", "pld.rank: expects a communication context, got int 2"),
    ("me + ctx", r"a communication context \(pld.get_comm_ctx\) is a handle, not a number"),
])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_number_for_the_context_or_the_context_as_a_number_is_an_error_at_run_time(expression, message, platform):
    with pytest.raises(PyptoError, match=message) as info:
        _run(_tagged_by(expression), platform)
    assert not isinstance(info.value, InternalError)
    assert info.value.span.line == TAG_LINE


def test_a_pld_op_missing_an_argument_is_named_as_written():
    text = ("import pypto.language as pl\nimport pypto.language.distributed as pld\n\n"
            "@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
            "def host(x: pl.Tensor[[2, 1, 16], pl.FP32]):\n"
            "    buf = pld.alloc_window_buffer(dtype=pl.FP32)\n")
    with pytest.raises(TypeCheckError, match=r"^<string>:6:\d+: pld.alloc_window_buffer: missing argument 'size'"):
        pl.parse(text)


def test_a_sub_worker_without_its_role_is_a_second_orchestrator_named_at_its_definition():
    text = f"""
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class TwoHosts:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_k(self, x: pl.Tensor[[1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[1, {C}], pl.FP32]]) -> pl.Tensor[[1, {C}], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [1, {C}]), [0, 0], y)
        return y

    @pl.function(level=pl.Level.HOST)
    def inspect(y: pl.Tensor[[{N}, 1, {C}], pl.FP32]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[{N}, 1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[{N}, 1, {C}], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.copy_k(x[r], y[r], device=r)
"""
    with pytest.raises(TypeCheckError, match=r"exactly one HOST orchestrator, found 2 \('inspect', 'host'") as info:
        _compiled(pl.parse(text))
    assert info.value.span is not None and "def inspect(" in info.value.span.text


def test_a_window_of_another_rank_than_the_kernel_parameter_is_an_error_at_the_call():
    text = f"""
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class PutIntoAWiderWindow:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[1, {C}], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, {C}], pl.FP32]]):
        ctx = pld.get_comm_ctx(data)
        pld.tensor.put(data, (pld.rank(ctx) + 1) % pld.nranks(ctx), x)

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, {C}], pl.FP32], data: pld.DistributedTensor[[1, {C}, 1], pl.FP32]):
        self.kernel(x, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[{N}, 1, {C}], pl.FP32]):
        buf = pld.alloc_window_buffer([1, {C}, 1], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = pld.window(buf, [1, {C}, 1], dtype=pl.FP32)
            self.per_rank(x[r], data, device=r)
"""
    with pytest.raises(TypeCheckError, match=rf"kernel\(\): argument 'data' expects a tensor of shape \[1, {C}\], "
                                             rf"got shape \[1, {C}, 1\]") as info:
        pl.parse(text)                                          # static shapes: refused when the call is parsed
    assert "self.kernel(x, data)" in info.value.span.text      # the orchestration's call, before the kernel runs


def test_no_host_orchestrator_points_at_the_host_function_of_another_role():
    text = f"""
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class NoHost:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_k(self, x: pl.Tensor[[1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[1, {C}], pl.FP32]]) -> pl.Tensor[[1, {C}], pl.FP32]:
        y = pl.store(pl.load(x, [0, 0], [1, {C}]), [0, 0], y)
        return y

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def host(x: pl.Tensor[[{N}, 1, {C}], pl.FP32], y: pl.Out[pl.Tensor[[{N}, 1, {C}], pl.FP32]]):
        pass
"""
    with pytest.raises(TypeCheckError, match=r"exactly one HOST orchestrator, found 0") as info:
        _compiled(pl.parse(text))
    assert info.value.span is not None and "def host(" in info.value.span.text
