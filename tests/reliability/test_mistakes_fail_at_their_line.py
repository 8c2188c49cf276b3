"""The beginner mistakes of issue #16, each of which used to crash inside pypto, hang, or quietly return
wrong numbers: each is now a pypto error (or a PyptoWarning) at the line the mistake is written on."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import InternalError, PyptoError, PyptoWarning, SimulationError, TypeCheckError, UnsupportedError
from pypto.runtime import RunConfig

KERNEL = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
               c: pl.Out[pl.Tensor[[64, 128], pl.FP32]], n: pl.Scalar[pl.INDEX]):
        t = pl.load(a, [0, 0], [64, 128])
        {body}
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
             c: pl.Out[pl.Tensor[[64, 128], pl.FP32]], n: pl.Scalar[pl.INDEX]):
        c = self.kernel(a, b, c, n)
        return c
"""
MISTAKE_LINE = 10          # the line of {body} in KERNEL


def _kernel(body: str) -> str:
    return KERNEL.format(body=body)


def _run(text: str, n: int = 0, platform: str = "a2a3sim"):
    a = np.ones((64, 128), np.float32)
    c = np.full_like(a, 5.0)
    ir.compile(pl.parse(text), platform=platform)(a, a.copy(), c, n)
    return c


def _at_mistake(err: PyptoError, line: int = MISTAKE_LINE) -> None:
    assert err.span is not None and err.span.line == line, (err.span, str(err))


@pytest.mark.parametrize("body, message", [
    ("u = pl.load(a, [0, 0], [64, -64])", r"shapes\[1\] is -64; a shape must be positive"),
    ("u = pl.load(a, [0, 0], [0, 64])", r"shapes\[0\] is 0; a shape must be positive"),
    ("u = pl.load(a, [0, 0], [64, 128], valid_shapes=[64, -1])", r"valid_shapes\[1\] is -1"),
    ("u = pl.create_tile([64, -128], dtype=pl.FP32, target_memory=pl.Mem.Vec)", r"shape\[1\] is -128"),
    ("u = pl.slice(t, [16, 128], [0, 0], [32, 128])", r"valid extent 32 of dim 0 exceeds the shape 16"),
])
def test_non_positive_or_oversized_extents_are_rejected_where_written(body, message):
    with pytest.raises(TypeCheckError, match=message) as info:
        pl.parse(_kernel(body))
    _at_mistake(info.value)


def test_a_zero_row_matmul_is_an_error_not_a_zero_division():
    body = ("x = pl.load(a, [0, 0], [0, 64], target_memory=pl.Mem.Mat)\n"
            "        z = pl.matmul(pl.move(x, target_memory=pl.Mem.Left), pl.move(x, target_memory=pl.Mem.Right))")
    with pytest.raises(TypeCheckError, match="a shape must be positive") as info:
        pl.parse(_kernel(body))
    _at_mistake(info.value)


def test_swapped_store_arguments_are_named_as_swapped():
    with pytest.raises(TypeCheckError, match="arguments look swapped") as info:
        pl.parse(_kernel("c = pl.store(c, [0, 0], t)"))
    _at_mistake(info.value)


@pl.jit
def forgot_out(a: pl.Tensor, c: pl.Tensor):                 # FORGOT-OUT-PARAM
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        pl.store(t, [0, 0], c)                # FORGOT-OUT
    return c


@pl.jit.incore
def copy_kernel(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], out)
    return out


@pl.jit
def forgot_out_of_a_sub_kernel_call(a: pl.Tensor, c: pl.Tensor):     # FORGOT-OUT-CALLER
    c = copy_kernel(a, c)                     # FORGOT-OUT-CALL
    return c


@pytest.mark.parametrize("kernel, message, write, param", [
    (forgot_out, r"pl.store writes 'c', an input parameter", "FORGOT-OUT", "FORGOT-OUT-PARAM"),
    (forgot_out_of_a_sub_kernel_call, r"copy_kernel\(\) writes its parameter 'out' \(pl.Out\), and 'c' passed for "
                                      "it is an input parameter", "FORGOT-OUT-CALL", "FORGOT-OUT-CALLER"),
])
def test_writing_an_input_parameter_of_the_entry_is_a_compile_time_error_naming_it(kernel, message, write, param):
    a = np.ones((16, 64), np.float32)
    c = np.zeros_like(a)
    with pytest.raises(PyptoError, match=message) as info:
        kernel(a, c)
    assert info.value.span.line == _line(write)
    assert f"c: pl.Out[...] at line {_line(param)}" in info.value.hint
    assert (c == 0).all()


@pl.jit.inline
def copy_inline(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [0, 0], [16, 64]), [0, 0], out)
    return out


@pl.jit
def forgot_out_of_an_inline_call(a: pl.Tensor, c: pl.Tensor):
    c = copy_inline(a, c)                     # FORGOT-OUT-INLINE
    return c


def test_passing_an_input_parameter_where_an_inline_function_writes_warns_at_compile_time():
    # the reference compiles this (its Qwen3 jit example updates an In KV cache so); the simulator refuses
    # the write when it runs
    import warnings
    a = np.ones((16, 64), np.float32)
    with pytest.warns(PyptoWarning, match="copy_inline\\(\\) writes its parameter 'out'") as record, \
            pytest.raises(SimulationError, match="In parameter"):
        forgot_out_of_an_inline_call(a, np.zeros_like(a))
    assert any(w.lineno == _line("FORGOT-OUT-INLINE") for w in record)
    with warnings.catch_warnings():          # warnings as errors: the warning itself, not an InternalError
        warnings.simplefilter("error")
        with pytest.raises(PyptoWarning, match="copy_inline\\(\\) writes its parameter 'out'"):
            forgot_out_of_an_inline_call(a, np.zeros_like(a), config=RunConfig(platform="a5sim"))


def test_a_second_return_is_unreachable_code():
    with pytest.raises(PyptoError, match="unreachable code") as info:
        pl.parse(_kernel("return c\n        c = pl.store(t, [0, 0], c)"))
    _at_mistake(info.value, MISTAKE_LINE + 1)


def test_a_declared_return_type_without_a_return():
    text = _kernel("c = pl.store(t, [0, 0], c)").replace("        return c\n\n    @pl.function(type=pl.FunctionType.Orch",
                                                       "\n    @pl.function(type=pl.FunctionType.Orch")
    text = text.replace("n: pl.Scalar[pl.INDEX]):\n        t =", "n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 128], pl.FP32]:\n        t =")
    with pytest.raises(PyptoError, match="declares a return type but never returns"):
        pl.parse(text)


@pytest.mark.parametrize("body, n, message", [
    ("u = pl.slice(t, [16, 128], [n, 0])\n        c = pl.store(u, [0, 0], c)", 60, r"tile.slice: dim 0 window \[60, 76\)"),
    ("u = pl.slice(t, [16, 128], [n, 0])\n        c = pl.store(u, [0, 0], c)", -1, r"tile.slice: dim 0 window \[-1, 15\)"),
    ("s = pl.load(a, [0, 0], [16, 128])\n        u = pl.assemble(t, s, [n, 0])\n        c = pl.store(u, [0, 0], c)",
     60, r"tile.assemble: dim 0 window \[60, 76\)"),
    ("u = pl.load(a, [n, 0], [16, 128])\n        c = pl.store(u, [0, 0], c)", 60, r"tile.load: dim 0 window \[60, 76\)"),
    ("u = pl.load(a, [0, 0], [64, 128], valid_shapes=[64, n])\n        c = pl.store(u, [0, 0], c)", -1,
     "negative extent -1"),
])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_out_of_range_run_time_windows_are_simulation_errors(body, n, message, platform):
    with pytest.raises(SimulationError, match=message) as info:
        _run(_kernel(body), n, platform)
    _at_mistake(info.value, MISTAKE_LINE + body.count("\n") - 1)      # the line before the final store


@pytest.mark.parametrize("reduce", ["row_max", "row_min", "row_argmax"])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_max_over_an_empty_valid_region_is_an_error_at_the_reduction(reduce, platform):
    body = ("u = pl.load(a, [0, 0], [64, 128], valid_shapes=[64, 0])\n"
            "        s = pl.create_tile([64, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)\n"
            f"        m = pl.{reduce}(u, s)\n"
            "        c = pl.store(pl.row_expand_sub(t, pl.cast(m, pl.FP32)), [0, 0], c)")
    with pytest.raises(PyptoError, match=rf"tile.{reduce}: reduces an empty valid region \(valid shape \[64, 0\]\)") \
            as info:
        _run(_kernel(body), platform=platform)
    assert not isinstance(info.value, InternalError)
    _at_mistake(info.value, MISTAKE_LINE + 2)


@pl.jit
def tiles_in_host_code(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [16, 64])          # FORGOT-AT
    pl.store(t, [0, 0], c)
    return c


@pl.jit
def reduction_in_host_code(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [16, 64])          # FORGOT-AT-REDUCE
    tmp = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
    m = pl.row_max(t, tmp)
    pl.store(pl.row_expand_sub(t, m), [0, 0], c)
    return c


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


@pytest.mark.parametrize("kernel, marker", [(tiles_in_host_code, "FORGOT-AT"),
                                            (reduction_in_host_code, "FORGOT-AT-REDUCE")])
def test_tile_ops_outside_pl_at_are_an_error_at_the_first_op(kernel, marker):
    a = np.ones((16, 64), np.float32)
    with pytest.raises(UnsupportedError, match="tile ops run on a core") as info:
        kernel(a, np.zeros_like(a))
    assert info.value.span.line == _line(marker) and "with pl.at(" in info.value.hint


@pl.jit
def tensor_compute_in_host_code(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    c[:] = pl.exp(a)                          # FORGOT-AT-TENSOR
    return c


def test_tensor_compute_outside_pl_at_names_the_host_function_and_pl_at():
    a = np.ones((16, 64), np.float32)
    with pytest.raises(UnsupportedError, match="tensor.exp in 'tensor_compute_in_host_code', which runs on the host "
                                               r"\(Orchestration function\): tensor compute runs on a core") as info:
        tensor_compute_in_host_code(a, np.zeros_like(a))
    assert info.value.span.line == _line("FORGOT-AT-TENSOR") and "with pl.at(" in info.value.hint


@pl.jit
def mixes_in_a_float32_tile(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        z = pl.tile.full([16, 64], dtype=pl.FP32, value=0.0)
        pl.store(pl.add(t, z), [0, 0], c)
    return c


def test_float64_arrays_are_blamed_at_the_call_with_the_conversion():
    a = np.ones((16, 64))                     # numpy's default dtype
    with pytest.raises(TypeCheckError, match=r"parameters 'a', 'c' got float64 arrays") as info:
        mixes_in_a_float32_tile(a, np.zeros_like(a))      # FLOAT64-CALL
    assert info.value.span.line == _line("FLOAT64-CALL")
    assert "astype(np.float32)" in info.value.hint


def test_float64_arrays_passed_to_a_compiled_program_name_the_parameter_and_the_conversion():
    compiled = ir.compile(pl.parse(_kernel("c = pl.store(t, [0, 0], c)")), platform="a2a3sim")
    a = np.ones((64, 128), np.float32)
    with pytest.raises(TypeCheckError, match="parameter 'b' expects dtype FP32 \\(float32\\), got float64") as info:
        compiled(a, np.ones((64, 128)), np.zeros_like(a), 0)      # FLOAT64-PROGRAM
    assert info.value.span.line == _line("FLOAT64-PROGRAM") and "b.astype(np.float32)" in info.value.hint


SCALE = 2.0


@pl.jit
def scaled(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        pl.store(pl.mul(t, SCALE), [0, 0], c)
    return c


def test_changing_a_module_constant_compiles_again():
    global SCALE
    a = np.ones((16, 64), np.float32)
    c = np.zeros_like(a)
    scaled(a, c)
    assert (c == 2.0).all()
    SCALE = 3.0
    try:
        scaled(a, c)
    finally:
        SCALE = 2.0
    assert (c == 3.0).all()
    scaled(a, c)
    assert (c == 2.0).all()


def test_an_out_region_the_kernel_never_wrote_keeps_the_callers_bytes():
    text = _kernel("u = pl.load(a, [0, 0], [32, 128])\n        c = pl.store(u, [0, 0], c)")
    with pytest.warns(PyptoWarning, match=r"output 'c' was not written .* 4096 of 8192 elements .*\[32:64, 0:128\]"):
        c = _run(text)
    assert (c[:32] == 1.0).all() and (c[32:] == 5.0).all()


@pl.jit
def spins_in_a_kernel(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        while True:                           # SPIN-KERNEL
            pass
        pl.store(t, [0, 0], c)
    return c


@pl.jit
def spins_in_the_orchestrator(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    while True:                               # SPIN-HOST
        pass
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 64])
        pl.store(t, [0, 0], c)
    return c


@pytest.mark.parametrize("kernel, marker, who", [(spins_in_a_kernel, "SPIN-KERNEL", "AIV core 0"),
                                                 (spins_in_the_orchestrator, "SPIN-HOST", "host orchestrator")])
def test_a_loop_that_never_ends_is_stopped_by_the_watchdog(kernel, marker, who):
    a = np.ones((16, 64), np.float32)
    with pytest.raises(SimulationError, match="watchdog budget") as info:
        kernel(a, np.zeros_like(a), config=RunConfig(sim_watchdog_seconds=0.3))
    err = info.value
    assert err.span.line == _line(marker) and who in str(err) and "sim_watchdog_seconds" in err.hint


def test_the_watchdog_budget_must_be_positive():
    with pytest.raises(ValueError, match="sim_watchdog_seconds"):
        RunConfig(sim_watchdog_seconds=0)
