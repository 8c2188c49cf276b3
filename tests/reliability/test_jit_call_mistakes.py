"""Mistakes in calling a `@pl.jit` kernel or writing a decorator: each is a pypto error that names the
parameter / keyword and points at the user's own line (this file), never a raw Python TypeError."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, TypeCheckError, ValueCheckError
from pypto.runtime import RunConfig


@pl.jit
def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [64, 128]), pl.load(b, [0, 0], [64, 128])), [0, 0], c)
    return c


def _arrays():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((64, 128)).astype(np.float32)
    return a, b, np.zeros((64, 128), np.float32)


def _points_here(err: PyptoError) -> None:
    assert err.span is not None and err.span.filename == __file__, err


def test_too_few_arguments_names_the_missing_parameter():
    a, b, _ = _arrays()
    with pytest.raises(TypeCheckError, match=r"missing argument 'c'") as info:
        tile_add(a, b)
    _points_here(info.value)


def test_too_many_arguments():
    a, b, c = _arrays()
    with pytest.raises(TypeCheckError, match=r"takes 3 arguments, got 4") as info:
        tile_add(a, b, c, c)
    _points_here(info.value)


def test_none_argument_names_the_parameter():
    a, _, c = _arrays()
    with pytest.raises(TypeCheckError, match=r"argument 'b' must be an array .* got NoneType") as info:
        tile_add(a, None, c)
    _points_here(info.value)


def test_unknown_keyword_is_named():
    a, b, c = _arrays()
    with pytest.raises(TypeCheckError, match=r"unexpected keyword argument 'skip_ptoas'") as info:
        tile_add(a, b, c, skip_ptoas=True)
    _points_here(info.value)
    assert "RunConfig" in info.value.hint


def test_arguments_by_name_work_and_match_positional():
    a, b, c = _arrays()
    tile_add(a, b=b, c=c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    with pytest.raises(TypeCheckError, match=r"multiple values for argument 'a'"):
        tile_add(a, b, c, a=a)


def test_python_list_argument_suggests_numpy():
    a, b, c = _arrays()
    with pytest.raises(TypeCheckError, match=r"argument 'a' must be an array .* got list") as info:
        tile_add(a.tolist(), b, c)
    _points_here(info.value)
    assert "np.asarray" in info.value.hint


def test_config_given_as_a_platform_string():
    a, b, c = _arrays()
    with pytest.raises(TypeCheckError, match=r"config= must be a RunConfig, got str") as info:
        tile_add(a, b, c, config="a2a3sim")
    _points_here(info.value)
    assert "RunConfig(platform='a2a3sim')" in info.value.hint
    with pytest.raises(TypeCheckError, match=r"config= must be a RunConfig"):
        tile_add.compile(a, b, c, config="a5sim")


def test_unknown_function_decorator_keyword_points_at_the_decorator():
    with pytest.raises(ValueCheckError, match=r"@pl.function got an unexpected keyword argument 'type_x'") as info:
        @pl.function(type_x=pl.FunctionType.InCore)
        def kernel(a: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            return a
    _points_here(info.value)
    assert "type=" in info.value.hint


def test_unknown_jit_decorator_keyword():
    with pytest.raises(ValueCheckError, match=r"@pl.jit got an unexpected keyword argument 'autoscope'") as info:
        @pl.jit(autoscope=False)
        def kernel(a: pl.Tensor):
            return a
    _points_here(info.value)
    assert "auto_scope=" in info.value.hint
