"""The reference's compile API: kernel.compile() from the signature, pl.RUNTIME scalars, the lazily written
build directory and its debug/run.py, ir.compile options, PYPTO_SIMULATE, the reference import paths."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import TypeCheckError, UnsupportedError, ValueCheckError
from pypto.runtime import RunConfig

ROOT = Path(__file__).resolve().parents[2]
M = pl.dynamic("M")


@pl.jit
def add(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
        out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pl.jit
def scale_rows(x: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]], n: pl.Scalar[pl.INT32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 64])
        pl.store(pl.mul(t, 2.0), [0, 0], out)
    return out


@pl.jit
def bare(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


@pytest.fixture
def builds(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    return tmp_path / "builds"


def _x(shape=(64, 64), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------ compile() from the signature
def test_compile_with_no_arguments_reads_the_annotations(builds):
    compiled = add.compile()
    assert compiled.param_names == ["a", "b", "out"]
    a, b = _x(seed=1), _x(seed=2)
    out = np.zeros_like(a)
    compiled(a, b, out)
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    assert add.compile(a, b, out) is compiled          # a sample of the same spec shares the cache entry


def test_runtime_scalar_stays_a_parameter_and_dynamic_dims_need_no_value(builds):
    compiled = scale_rows.compile(n=pl.RUNTIME)
    assert compiled.param_names == ["x", "out", "n"]
    x = _x((32, 64))
    out = np.zeros_like(x)
    compiled(x, out, 7)                                  # the value arrives at dispatch
    np.testing.assert_allclose(out[:16], 2 * x[:16], rtol=1e-6)
    assert scale_rows.compile(x, out, pl.RUNTIME) is compiled


def test_compile_without_values_says_what_is_missing(builds):
    with pytest.raises(TypeCheckError, match="scalar parameter 'n' needs a value.*pl.RUNTIME"):
        scale_rows.compile()
    with pytest.raises(TypeCheckError, match="'a' is a bare pl.Tensor"):
        bare.compile()
    with pytest.raises(TypeCheckError, match="compile-time marker"):
        scale_rows(_x((32, 64)), np.zeros((32, 64), np.float32), pl.RUNTIME)
    with pytest.raises(TypeCheckError, match="not an annotated pl.Scalar"):
        add.compile(a=pl.RUNTIME)
    with pytest.raises(TypeError, match="unexpected keyword argument 'skip_ptoas'"):
        scale_rows.compile(skip_ptoas=True)             # compile options go in config=, not here


# ------------------------------------------------------------------ the build directory
def test_output_dir_is_written_on_first_read_with_the_documented_layout(builds):
    compiled = add.compile()
    assert compiled.build_dir is None and not builds.exists()
    out = compiled.output_dir
    assert isinstance(out, Path) and out.parent == builds and compiled.output_dir == out
    assert {"kernels", "orchestration", "ptoas", "report", "debug", "kernel_config.py"} <= {p.name for p in out.iterdir()}
    assert not (out / "passes_dump").exists()
    assert list((out / "ptoas").glob("*.pto")) and list((out / "kernels" / "sim").glob("*.py"))
    assert os.fspath(compiled) == str(out)


def test_dumping_adds_passes_dump(tmp_path):
    compiled = ir.compile(add.lower(), output_dir=tmp_path / "b", dump_passes=ir.PassDumpLevel.CONCISE)
    assert (compiled.output_dir / "passes_dump" / "00_frontend.py").is_file()
    none = ir.compile(add.lower(), output_dir=tmp_path / "n", dump_passes=ir.PassDumpLevel.NONE)
    assert not (none.output_dir / "passes_dump").exists()


def test_debug_run_py_reloads_the_build_and_prints_ok(builds):
    compiled = scale_rows.compile(n=pl.RUNTIME)
    script = compiled.output_dir / "debug" / "run.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(script), "--dim", "M=32", "--scalar", "n=3"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "OK"


def test_debug_harness_runs_the_files_on_disk(builds):
    """A hand edit of the final IR in the build is what the harness runs."""
    from pypto.runtime.build_harness import run_build
    compiled = add.compile()
    out = compiled.output_dir
    a = _x(seed=3)
    (result,) = run_build(out, inputs={"a": a, "b": a})
    np.testing.assert_allclose(result, a + a, rtol=1e-6)
    final = out / "orchestration" / "add.py"
    final.write_text(final.read_text().replace("pl.tile.add(", "pl.tile.sub("))
    (edited,) = run_build(out, inputs={"a": a, "b": a})
    np.testing.assert_array_equal(edited, np.zeros_like(a))


# ------------------------------------------------------------------ ir.compile options
def test_options_without_effect_warn_and_say_why():
    with pytest.warns(UserWarning, match="emit_source_loc=True.*no source locations"):
        ir.compile(add.lower(), emit_source_loc=True)
    with pytest.warns(UserWarning, match="skip_ptoas=False.*no ptoas"):
        ir.compile(add.lower(), skip_ptoas=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ir.compile(add.lower(), skip_ptoas=True, analyze_auto_scopes_for_deps=False)   # what happens anyway
    with pytest.raises(TypeError, match="unexpected keyword argument 'skip_ptas'"):
        ir.compile(add.lower(), skip_ptas=True)


def test_profiling_writes_the_pipeline_profile(tmp_path):
    import json
    compiled = ir.compile(add.lower(), output_dir=tmp_path, profiling=True)
    profile = json.loads((compiled.output_dir / "report" / "pipeline_profile.json").read_text())
    assert profile["passes"] and profile["total_seconds"] >= 0
    assert "total" in (tmp_path / "report" / "pipeline_profile.txt").read_text()


def test_verification_level_reaches_the_passes(monkeypatch):
    from pypto.passes import PassContext
    seen = []
    real = PassContext.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        seen.append(self.verification_level)

    monkeypatch.setattr(PassContext, "__init__", spy)
    ir.compile(add.lower(), verification_level=ir.VerificationLevel.NONE)
    assert ir.VerificationLevel.NONE in seen


def test_backend_type_picks_the_platform_and_must_agree():
    from pypto.backend import BackendType
    assert ir.compile(add.lower(), backend_type=BackendType.Ascend950).platform == "a5sim"
    with pytest.raises(ValueCheckError, match="does not match platform"):
        ir.compile(add.lower(), backend_type=BackendType.Ascend950, platform="a2a3sim")


# ------------------------------------------------------------------ PYPTO_SIMULATE
def test_pypto_simulate_maps_device_platforms_to_their_simulators(monkeypatch):
    monkeypatch.delenv("PYPTO_SIMULATE", raising=False)
    with pytest.raises(UnsupportedError, match="PYPTO_SIMULATE=1"):
        add(_x(), _x(), np.zeros((64, 64), np.float32), config=RunConfig(platform="a2a3"))
    monkeypatch.setenv("PYPTO_SIMULATE", "1")
    assert RunConfig(platform="a2a3").platform == "a2a3sim" and RunConfig(platform="a5").platform == "a5sim"
    assert ir.compile(add.lower(), platform="a5").platform == "a5sim"
    a = _x()
    out = np.zeros_like(a)
    add(a, a, out, config=RunConfig(platform="a2a3"))
    np.testing.assert_allclose(out, a + a, rtol=1e-6)


# ------------------------------------------------------------------ the reference's import paths
def test_reference_import_paths():
    from pypto import passes
    from pypto.backend import BackendType, set_backend_type  # noqa: F401
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.ir.compiled_program import CompiledProgram
    from pypto.ir.pass_manager import PassDumpLevel
    from pypto.runtime import CompiledProgram as RuntimeCompiledProgram
    assert CompiledProgram is RuntimeCompiledProgram is ir.CompiledProgram
    assert PassDumpLevel is ir.PassDumpLevel and ir.OptimizationStrategy.Default is not None
    assert ir.VerificationLevel.ROUNDTRIP.name == "ROUNDTRIP"
    assert passes.convert_tensor_to_tile_ops().name == "ConvertTensorToTileOps"
    assert issubclass(PartialCodegenError, RuntimeError)
    import pypto
    assert callable(pypto.set_log_level) and hasattr(pypto, "LogLevel")


def test_a_device_build_without_a_kernels_pto_is_a_partial_codegen_error(tmp_path, monkeypatch):
    from pypto.backend.pto_backend import PartialCodegenError
    from pypto.codegen import pto
    monkeypatch.delenv("PYPTO_SIMULATE", raising=False)

    def fail(f, arch):
        raise UnsupportedError(f"no PTO emitter for {f.name} (test)")

    monkeypatch.setattr(pto, "generate_function", fail)
    with pytest.raises(PartialCodegenError, match="no .pto for kernel") as info:
        ir.compile(add.lower(), output_dir=tmp_path, platform="a2a3")
    assert info.value.files == {}


def test_serialize_round_trips_a_function_and_a_program():
    prog = add.lower()
    again = ir.deserialize(ir.serialize(prog))
    ir.assert_structural_equal(prog, again)
    func = next(iter(prog.functions.values()))
    data = ir.serialize(func)
    assert isinstance(data, bytes)
    ir.assert_structural_equal(func, ir.deserialize(data))
    with pytest.raises(ValueError, match="not written by pypto.ir.serialize"):
        ir.deserialize(b"hello")
