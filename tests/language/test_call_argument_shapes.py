"""A call from one program function to another checks tensor shapes where both sides are static: a
static argument shape that differs from the parameter's is a TypeCheckError at the call, naming the
callee, the parameter and both shapes. Symbolic dims are left to run time, and a HOST orchestrator
may bind a window of another shape with the same element count (the chip views it as the parameter)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError
from pypto.ir.distributed_compiled_program import DistributedConfig


def _program(param: str, arg: str, *, call: str = "out = self.k(x, out)"):
    """A kernel k(x: Tensor[param], out) called from an orchestration whose x is Tensor[arg]."""
    return pl.parse(f'''
import pypto.language as pl
N = pl.dynamic("N")
M = pl.dynamic("M")

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[{param}, pl.FP32],
          out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, [0, 0], [16, 32])
        ret = pl.store(t, [0, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[{arg}, pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        {call}
        return out
''')


@pytest.mark.parametrize("param, arg", [
    ("[16, 32]", "[32, 16]"),           # same rank, other dims
    ("[16, 32]", "[16, 64]"),
    ("[16, 32]", "[512]"),              # same element count, other rank: not a window, so no reshape
    ("[16, 32]", "[1, 16, 32]"),
    ("[N, 32]", "[16, 64]"),            # a symbolic dim does not excuse a static one that differs
], ids=["swapped", "wider", "flat", "rank3", "partly-dynamic"])
def test_a_static_shape_that_differs_is_refused_at_the_call(param, arg):
    with pytest.raises(TypeCheckError, match=r"k\(\): argument 'x' expects a tensor of shape ") as info:
        _program(param, arg)
    assert f"shape {param}, got shape {arg}" in str(info.value)
    assert info.value.span is not None and "self.k(x, out)" in info.value.span.text


@pytest.mark.parametrize("param, arg", [
    ("[16, 32]", "[16, 32]"),
    ("[N, 32]", "[16, 32]"),            # symbolic on one side: checked when the tensors are bound
    ("[16, 32]", "[N, 32]"),
    ("[N, M]", "[16, 32]"),
    ("[N, 32]", "[M, 32]"),
    ("[16, 32]", "[N, 16, 32]"),        # another rank with a symbolic dim: left to the run-time rank check
], ids=["equal", "param-dynamic", "arg-dynamic", "all-dynamic", "two-symbols", "rank-dynamic"])
def test_shapes_that_may_agree_are_accepted(param, arg):
    prog = _program(param, arg)
    assert "k" in prog.functions


def test_a_keyword_argument_is_checked_too():
    with pytest.raises(TypeCheckError, match=r"argument 'x' expects a tensor of shape \[16, 32\], got shape \[8, 32\]"):
        _program("[16, 32]", "[8, 32]", call="out = self.k(out=out, x=x)")


def test_a_slice_of_the_right_shape_is_accepted_and_runs():
    prog = _program("[16, 32]", "[32, 32]", call="out = self.k(x[0:16, :], out)")
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros((16, 32), np.float32)
    ir.compile(prog, platform="a2a3sim")(x, out)
    np.testing.assert_array_equal(out, x[:16])


# ---------------------------------------------------------------------------- windows of a HOST orchestrator
R, C = 2, 64


def _host_program(window: str, passed: str = "w"):
    """A HOST orchestrator binding a window of shape `window` to a chip orchestration's [1, C] parameter."""
    return pl.parse(f'''
import pypto.language as pl

@pl.program
class Ring:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, data: pl.InOut[pld.DistributedTensor[[1, {C}], pl.FP32]]) -> pld.DistributedTensor[[1, {C}], pl.FP32]:
        t: pl.Tile[[1, {C}], pl.FP32] = pl.load(data, [0, 0], [1, {C}])
        data = pl.store(pl.add(t, 1.0), [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, data: pl.InOut[pld.DistributedTensor[[1, {C}], pl.FP32]]) -> pld.DistributedTensor[[1, {C}], pl.FP32]:
        data = self.bump(data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, out: pl.Out[pl.Tensor[[{R}, 1, {C}], pl.FP32]]):
        buf = pld.alloc_window_buffer({window}, dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            w = pld.window(buf, {window}, dtype=pl.FP32)
            self.per_rank({passed}, device=r)
''')


def test_a_host_dispatch_may_bind_a_window_of_the_same_element_count():
    prog = _host_program(f"[{C}]")
    call = [s for s in ir.python_print(prog.functions["host"]).splitlines() if "self.per_rank" in s]
    assert call                                              # parsed: a [64] window for a [1, 64] parameter
    ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(R))))


def test_a_host_dispatch_of_a_window_of_another_element_count_is_refused():
    with pytest.raises(TypeCheckError, match=rf"per_rank\(\): argument 'data' expects a tensor of shape \[1, {C}\], "
                                             rf"got shape \[{C // 2}\]"):
        _host_program(f"[{C // 2}]")


def test_a_window_indexed_by_rank_is_refused_at_the_subscript():
    with pytest.raises(TypeCheckError, match=r"w\[...\] indexes a stacked host tensor .* but 'w' is a window") as info:
        _host_program(f"[{R}, 1, {C}]", passed="w[r]")
    assert "w[r]" in info.value.span.text
