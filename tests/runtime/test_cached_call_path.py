"""The cached @pl.jit call's shortcut (all-numpy positional arguments with a signature seen before) and
the plain-store fast path: same results and errors as the general path, recompiles when it should."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import TypeCheckError
from pypto.runtime import RunConfig


@pl.jit
def add_rows(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [rows, cols])
        tb = pl.load(b, [0, 0], [rows, cols])
        pl.store(pl.add(ta, tb), [0, 0], c)
    return c


def _arrays(rows: int, dtype=np.float32):
    rng = np.random.default_rng(rows)
    return (rng.standard_normal((rows, 128)).astype(dtype), rng.standard_normal((rows, 128)).astype(dtype),
            np.zeros((rows, 128), dtype))


def test_repeated_calls_reuse_one_compile_and_stay_correct():
    add_rows.clear_cache()
    a, b, c = _arrays(16)
    for _ in range(3):
        c[:] = 0
        add_rows(a, b, c)
        np.testing.assert_array_equal(c, a + b)
    assert len(add_rows._cache) == 1
    a2, b2, c2 = _arrays(32)                       # a new shape compiles again, then is cached too
    add_rows(a2, b2, c2)
    add_rows(a2, b2, c2)
    np.testing.assert_array_equal(c2, a2 + b2)
    assert len(add_rows._cache) == 2


def test_clear_cache_forgets_the_shortcut_too():
    a, b, c = _arrays(16)
    add_rows(a, b, c)
    add_rows.clear_cache()
    assert not add_rows._cache and not add_rows._by_arrays
    c[:] = 0
    add_rows(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_a_different_compile_option_is_a_different_program():
    add_rows.clear_cache()
    a, b, c = _arrays(16)
    add_rows(a, b, c, config=RunConfig())
    add_rows(a, b, c, config=RunConfig(dump_passes=True))
    assert len(add_rows._cache) == 2


def test_mistakes_after_a_cached_call_still_report():
    a, b, c = _arrays(16)
    add_rows(a, b, c)
    with pytest.raises(TypeCheckError, match="config= must be a RunConfig"):
        add_rows(a, b, c, config="a2a3sim")
    with pytest.raises(TypeCheckError, match="takes 3 arguments"):
        add_rows(a, b, c, c)
    with pytest.raises(TypeCheckError, match="must be an array"):
        add_rows(a, [1.0], c)


def test_keyword_and_mixed_calls_take_the_general_path_with_the_same_result():
    a, b, c = _arrays(16)
    add_rows(a, b, c)
    c[:] = 0
    add_rows(a, b=b, c=c)
    np.testing.assert_array_equal(c, a + b)


def test_plain_store_takes_the_fast_path_and_an_atomic_add_does_not():
    from pypto.ir.enums import AtomicType
    from pypto.runtime.sim.fastpath import _plain_store
    assert _plain_store({})
    assert _plain_store({"atomic": AtomicType.None_})
    assert not _plain_store({"atomic": AtomicType.Add})
    a, b, c = _arrays(16)
    config = RunConfig()
    add_rows(a, b, c, config=config)
    sim = add_rows.compile(a, b, c, config=config)._sim_for(config)
    kernels = [code for code in sim.functions.values() if code.func.func_type.name != "Orchestration"]
    assert any("_fp_tile_store(" in code.source for code in kernels)


def test_the_shortcut_key_tells_apart_every_option_the_compile_key_does():
    import dataclasses
    base = RunConfig()
    args = _arrays(16)
    for f in dataclasses.fields(RunConfig):
        other = RunConfig()
        setattr(other, f.name, object())          # a value unequal to anything (set after validation)
        if other.compile_key() != base.compile_key():
            assert add_rows._arrays_key(args, other) != add_rows._arrays_key(args, base), f.name
