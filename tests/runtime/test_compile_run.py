"""The compile driver and run(): artifacts only when asked, CompiledProgram calling conventions,
RunConfig validation, multi-task programs through the whole pipeline."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import SimulationError, UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.runtime import CompiledProgram, RunConfig, run


@pl.program
class AddTwice:
    @pl.function(type=pl.FunctionType.InCore)
    def add_twice(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        once: pl.Tensor[[64, 64], pl.FP32] = pl.add(x, x)
        twice: pl.Tensor[[64, 64], pl.FP32] = pl.add(once, x)
        return twice

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        y: pl.Tensor[[64, 64], pl.FP32] = self.add_twice(x)
        return y


@pl.program
class Chain:
    """tmp = a + b in one task, out = tmp * a in the next: a RAW edge through a created tensor."""
    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
              out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        ta: pl.Tile[[64, 128], pl.FP32] = pl.load(a, [0, 0], [64, 128])
        tb: pl.Tile[[64, 128], pl.FP32] = pl.load(b, [0, 0], [64, 128])
        r: pl.Tensor[[64, 128], pl.FP32] = pl.store(pl.add(ta, tb), [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.InCore)
    def mul_k(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
              out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        ta: pl.Tile[[64, 128], pl.FP32] = pl.load(a, [0, 0], [64, 128])
        tb: pl.Tile[[64, 128], pl.FP32] = pl.load(b, [0, 0], [64, 128])
        r: pl.Tensor[[64, 128], pl.FP32] = pl.store(pl.mul(ta, tb), [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        tmp: pl.Tensor[[64, 128], pl.FP32] = pl.create_tensor([64, 128], dtype=pl.FP32)
        tmp2: pl.Tensor[[64, 128], pl.FP32] = self.add_k(a, b, tmp)
        r: pl.Tensor[[64, 128], pl.FP32] = self.mul_k(tmp2, a, out)
        return r


def _x():
    return np.random.default_rng(1).standard_normal((64, 64), dtype=np.float32)


def test_run_compiles_and_return_style_call():
    compiled = run(AddTwice)
    assert isinstance(compiled, CompiledProgram)
    assert compiled.program is AddTwice
    assert compiled.lowered.functions["add_twice"].func_type is FunctionType.AIV
    assert compiled.param_names == ["x"] and compiled.has_return and compiled.platform == "a2a3sim"
    x = _x()
    np.testing.assert_allclose(compiled(x), 3 * x, rtol=1e-6)


def test_no_directories_without_dumps_until_output_dir_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    compiled = ir.compile(AddTwice)
    assert compiled.build_dir is None
    assert not (tmp_path / "builds").exists()
    out = compiled.output_dir                        # the first read writes the build
    assert out.parent == tmp_path / "builds" and compiled.build_dir == out


def test_dump_writes_passes_orchestration_kernels_and_report(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    compiled = ir.compile(AddTwice, dump_passes=True)
    out = compiled.output_dir
    assert out.parent == tmp_path / "builds" and out.name.startswith("AddTwice_")
    assert any((out / "passes_dump").iterdir())
    assert (out / "orchestration" / "AddTwice.py").read_text().startswith("# pypto.program: AddTwice")
    assert (out / "orchestration" / "main.sim.py").exists()
    kernel_src = (out / "kernels" / "sim" / "add_twice.py").read_text()
    assert "def add_twice(_sim_ctx, x, " in kernel_src
    assert "add_twice" in (out / "report" / "memory.txt").read_text()
    # the simulator executes the written file, so tracebacks and breakpoints point at it
    assert compiled.sim.functions["add_twice"].filename == str(out / "kernels" / "sim" / "add_twice.py")
    np.testing.assert_allclose(compiled(_x()), 3 * _x(), rtol=1e-6)


def test_explicit_output_dir(tmp_path):
    compiled = ir.compile(AddTwice, output_dir=tmp_path / "o")
    assert compiled.output_dir == tmp_path / "o" and (tmp_path / "o" / "kernels" / "sim").is_dir()


def test_two_tasks_in_order_under_every_schedule():
    compiled = run(Chain)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 64, 128), dtype=np.float32)
    for cfg in [RunConfig(), *(RunConfig(sim_schedule="random", sim_seed=s) for s in range(5))]:
        out = np.zeros_like(a)
        compiled(a, b, out, config=cfg)
        np.testing.assert_array_equal(out, (a + b) * a)


def test_run_with_tensors_executes_in_place():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 64, 128), dtype=np.float32)
    out = np.zeros_like(a)
    run(Chain, a, b, out, config=RunConfig())
    np.testing.assert_array_equal(out, (a + b) * a)
    out2 = np.zeros_like(a)
    run(Chain, a, b, out2, config=RunConfig(codegen_only=True))
    assert np.all(out2 == 0)


def test_runconfig_validation():
    assert RunConfig().backend_type == "Ascend910B"
    assert RunConfig(platform="a5sim").backend_type == "Ascend950"
    with pytest.raises(ValueError, match="unknown platform"):
        RunConfig(platform="cuda")
    with pytest.raises(ValueError, match="sim_schedule"):
        RunConfig(sim_schedule="fifo")


def test_onboard_platform_compiles_but_does_not_run():
    compiled = ir.compile(AddTwice, platform="a2a3")
    assert compiled.backend_type == "Ascend910B"
    with pytest.raises(UnsupportedError, match="Ascend toolchain"):
        compiled(_x())
    with pytest.raises(UnsupportedError, match="a5sim"):
        run(AddTwice, _x(), config=RunConfig(platform="a5"))


def test_a5sim_runs():
    compiled = run(AddTwice, config=RunConfig(platform="a5sim"))
    np.testing.assert_allclose(compiled(_x()), 3 * _x(), rtol=1e-6)
    with pytest.raises(ValueError, match="compiled for a5sim"):
        compiled(_x(), config=RunConfig())


def test_the_manifest_names_the_orchestration_code_that_runs(tmp_path):
    from pypto.codegen.kernel_config import read_kernel_config
    compiled = ir.compile(AddTwice, output_dir=tmp_path)
    cfg = read_kernel_config(tmp_path / "kernel_config.py")
    source = tmp_path / cfg["ORCHESTRATION"]["source"]
    assert source.name == "main.sim.py"
    assert compiled.sim.functions["main"].fn.__code__.co_filename == str(source)
