"""The debugging subcommands of `pypto`: run --trace, bisect, trace-ir, memory-map."""

import json
import textwrap
from pathlib import Path

import pytest

from pypto.cli import main
from pypto.debug.swimlane import check_chrome_trace

ROOT = Path(__file__).resolve().parents[1]
PROGRAM_EXAMPLE = ROOT / "examples" / "intermediate" / "02_program.py"

KERNEL = '''
import numpy as np
import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def double_exp(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.exp(pl.mul(x, 2.0))
    return y


def bisect_inputs():
    x = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
    return [x, np.zeros_like(x)]


if __name__ == "__main__":
    x, y = bisect_inputs()
    double_exp(x, y, config=RunConfig())
    print("ran")
'''


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(KERNEL))
    return path


def test_run_with_trace_writes_a_swimlane(kernel_file, tmp_path, capsys):
    assert main(["run", str(kernel_file), "--trace", "-o", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert "ran" in captured.out and "swimlane.json" in captured.err
    (path,) = list((tmp_path / "out").glob("*/dfx_outputs/swimlane.json"))
    assert check_chrome_trace(json.loads(path.read_text())) == []


def test_bisect_reports_every_stage_and_exits_zero_when_all_agree(kernel_file, capsys):
    assert main(["bisect", str(kernel_file)]) == 0
    out = capsys.readouterr().out
    assert "ConvertTensorToTileOps" in out and "simulator (final IR)" in out
    assert "every checked stage agrees" in out


def test_bisect_needs_inputs(tmp_path, capsys):
    path = tmp_path / "noinputs.py"
    path.write_text(textwrap.dedent(KERNEL).replace("def bisect_inputs", "def other_inputs"))
    assert main(["bisect", str(path)]) == 1
    assert "bisect_inputs()" in capsys.readouterr().err


def test_trace_ir_and_memory_map_of_a_build_directory(tmp_path, capsys):
    assert main(["compile", str(PROGRAM_EXAMPLE), "-o", str(tmp_path)]) == 0
    (build,) = list(tmp_path.iterdir())
    assert main(["trace-ir", str(build)]) == 0
    assert (build / "report" / "ir_trace.html").is_file()
    assert main(["memory-map", str(build)]) == 0
    assert "<svg" in (build / "report" / "memory_map.html").read_text()
    capsys.readouterr()
    assert main(["memory-map", str(build), "--text"]) == 0
    assert "on-chip memory per kernel" in capsys.readouterr().out


def test_trace_ir_of_a_source_file_links_statements(tmp_path, capsys):
    out = tmp_path / "t.html"
    assert main(["trace-ir", str(PROGRAM_EXAMPLE), "-o", str(out)]) == 0
    assert "02_program.py:" in out.read_text()


def test_memory_map_of_a_missing_source_is_a_clear_error(tmp_path, capsys):
    assert main(["memory-map", str(tmp_path / "nothing")]) == 1
    assert "no such file or build directory" in capsys.readouterr().err
