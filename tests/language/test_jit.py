"""@pl.jit: specialization (shapes, dtypes, scalar values, dynamic dims), the in-memory cache,
sub-kernels found by bare name, compile / lower, and the calling conventions."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir import Program
from pypto.ir.enums import FunctionType
from pypto.runtime import CompiledProgram, RunConfig

M = pl.dynamic("M")


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [rows, cols])
        tb = pl.load(b, [0, 0], [rows, cols])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def scale(a: pl.Tensor, c: pl.Out[pl.Tensor], s: pl.FP32):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 128])
        pl.store(pl.mul(t, s), [0, 0], c)
    return c


@pl.jit.incore
def add_kernel(a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
               c: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
    ta = pl.load(a, [0, 0], [64, 128])
    tb = pl.load(b, [0, 0], [64, 128])
    c = pl.store(pl.add(ta, tb), [0, 0], c)
    return c


@pl.jit
def calls_sub_kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    c = add_kernel(a, b, c)
    return c


@pl.jit
def doubled_rows(a: pl.Tensor[[M, 128], pl.FP32], c: pl.Out[pl.Tensor[[M, 128], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(M // 64):
            t = pl.load(a, [i * 64, 0], [64, 128])
            pl.store(pl.add(t, t), [i * 64, 0], c)
    return c


def _arrays(rows=64, cols=128, dtype=np.float32):
    rng = np.random.default_rng(rows * 1000 + cols)
    return (rng.standard_normal((rows, cols)).astype(dtype), rng.standard_normal((rows, cols)).astype(dtype),
            np.zeros((rows, cols), dtype))


def test_runs_in_place_and_returns_none():
    a, b, c = _arrays()
    assert tile_add(a, b, c, config=RunConfig()) is None
    np.testing.assert_array_equal(c, a + b)


def test_specializes_per_shape_and_caches():
    tile_add.clear_cache()
    for rows in (64, 32, 64):
        a, b, c = _arrays(rows)
        tile_add(a, b, c)
        np.testing.assert_array_equal(c, a + b)
    assert len(tile_add._cache) == 2
    a, b, c = _arrays(64)
    assert tile_add.compile(a, b, c) is tile_add.compile(a, b, c)


def test_dtype_is_part_of_the_specialization():
    tile_add.clear_cache()
    a, b, c = _arrays(dtype=np.float16)
    tile_add(a, b, c)
    np.testing.assert_array_equal(c, (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16))
    a, b, c = _arrays()
    tile_add(a, b, c)
    assert len(tile_add._cache) == 2


def test_scalars_are_specialization_constants():
    scale.clear_cache()
    a, _, c = _arrays()
    scale(a, c, 3.0)
    np.testing.assert_allclose(c, a * np.float32(3.0))
    scale(a, c, 0.5)
    np.testing.assert_allclose(c, a * np.float32(0.5))
    assert len(scale._cache) == 2
    lowered = scale.lower(a, c, 0.5)
    orch = [f for f in lowered.functions.values() if f.func_type is FunctionType.Orchestration][0]
    assert [p.name_hint for p in orch.params] == ["a", "c"]       # the scalar became a constant


def test_sub_kernel_called_by_bare_name():
    a, b, c = _arrays()
    calls_sub_kernel(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    compiled = calls_sub_kernel.compile(a, b, c)
    assert isinstance(compiled, CompiledProgram)
    assert "add_kernel" in compiled.lowered.functions
    assert compiled.lowered.functions["add_kernel"].func_type is FunctionType.AIV


def test_dynamic_dims_share_one_compiled_program():
    doubled_rows.clear_cache()
    for rows in (128, 256):
        a, _, c = _arrays(rows)
        doubled_rows(a, c)
        np.testing.assert_array_equal(c, a + a)
    assert len(doubled_rows._cache) == 1


def test_lower_returns_the_post_pass_program():
    a, b, c = _arrays()
    lowered = tile_add.lower(a, b, c)
    assert isinstance(lowered, Program)
    kinds = {f.func_type for f in lowered.functions.values()}
    assert FunctionType.Orchestration in kinds and FunctionType.AIV in kinds


def test_compile_options_are_not_keyword_arguments():
    a, b, c = _arrays()
    with pytest.raises(TypeError, match="unexpected keyword argument 'skip_ptoas'"):
        tile_add(a, b, c, skip_ptoas=True)


def test_sub_kernels_are_not_callable_from_python():
    a, b, c = _arrays()
    with pytest.raises(TypeError, match="sub-kernel"):
        add_kernel.compile(a, b, c)


def test_platform_is_part_of_the_key_and_onboard_runs_are_refused():
    from pypto.errors import UnsupportedError
    a, b, c = _arrays()
    compiled = tile_add.compile(a, b, c, config=RunConfig(platform="a5sim"))
    assert compiled.platform == "a5sim" and compiled.backend_type == "Ascend950"
    assert compiled is not tile_add.compile(a, b, c)
    with pytest.raises(UnsupportedError, match="Ascend toolchain"):
        tile_add(a, b, c, config=RunConfig(platform="a2a3"))


@pl.jit.incore
def _scale_block(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.FP32):
    rows, cols = x.shape
    for i in pl.range(rows // 16):
        t = pl.load(x, [i * 16, 0], [16, cols])
        pl.store(pl.mul(t, alpha), [i * 16, 0], y)
    return y


@pl.jit
def _two_scales(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([32, 64], dtype=pl.FP32)
    tmp = _scale_block(x, tmp, 2.0)
    out = _scale_block(tmp, out, -3.0)
    return out


def test_incore_sub_kernel_with_bare_annotations_is_specialized_per_call_site():
    x = np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32)
    out = np.zeros_like(x)
    _two_scales(x, out)
    np.testing.assert_allclose(out, -6.0 * x, rtol=1e-6)
    lowered = _two_scales.lower(x, out)
    kernels = sorted(n for n in lowered.functions if n.startswith("_scale_block"))
    assert kernels == ["_scale_block", "_scale_block_1"]      # one per distinct constant alpha
    assert "pl.tile.muls(t, -3.0)" in lowered.as_python()
