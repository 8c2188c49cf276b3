"""The `pypto` command as a new user meets it: compile an example, list dumps, diff a pass, --help."""

import subprocess
import sys
from pathlib import Path

import pytest

from pypto.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
PROGRAM_EXAMPLE = ROOT / "examples" / "intermediate" / "02_program.py"
JIT_EXAMPLE = ROOT / "examples" / "beginner" / "01_hello_world.py"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    base = tmp_path_factory.mktemp("cli")
    assert main(["compile", str(PROGRAM_EXAMPLE), "-o", str(base)]) == 0
    (out,) = list(base.iterdir())
    return out


def test_compile_writes_a_build_directory(build, capsys):
    assert build.name.startswith("AddTwice_")
    assert (build / "ptoas" / "add_twice.pto").is_file()
    assert (build / "kernel_config.py").is_file()
    assert (build / "passes_dump" / "00_frontend.py").is_file()
    assert (build / "orchestration" / "main.sim.py").is_file()


def test_compile_names_the_orchestration_code_it_wrote(tmp_path, capsys):
    assert main(["compile", str(PROGRAM_EXAMPLE), "-o", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    (out,) = list(tmp_path.iterdir())
    [name] = [p.name for p in (out / "orchestration").glob("*.sim.py")]
    assert f"orchestration (the host code the simulator runs): orchestration/{name}" in printed


def test_compile_runs_main_for_jit_kernels(tmp_path, capsys):
    assert main(["compile", str(JIT_EXAMPLE), "-o", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "compiled tile_add" in printed and "tile_add" in printed
    (out,) = list(tmp_path.iterdir())
    assert list((out / "ptoas").glob("*.pto")) and (out / "passes_dump").is_dir()


def test_dumps_lists_and_prints(build, capsys):
    assert main(["dumps", str(build)]) == 0
    listing = capsys.readouterr().out
    assert "00  frontend" in listing and "ConvertToSSA" in listing and "AllocateMemoryAddr" in listing
    assert main(["dumps", str(build), "ConvertToSSA"]) == 0
    assert capsys.readouterr().out.startswith("# pypto.program: AddTwice")


def test_diff_unified_shows_what_the_pass_did(build, capsys):
    assert main(["diff", str(build), "InitMemRef", "--unified"]) == 0
    diff = capsys.readouterr().out
    assert "_after_ExpandMixedKernel.py" in diff.splitlines()[0] or "---" in diff.splitlines()[0]
    assert "+++" in diff and any(line.startswith("+") and "pl.tile.alloc(" in line for line in diff.splitlines())


def test_diff_side_by_side(build, capsys):
    assert main(["diff", str(build), "InitMemRef", "--side-by-side", "--width", "200"]) == 0
    table = capsys.readouterr().out
    assert "_after_InitMemRef.py" in table and "pl.tile.alloc(" in table


def test_unknown_pass_is_a_friendly_error(build, capsys):
    assert main(["diff", str(build), "InitMemref2"]) == 1
    err = capsys.readouterr().err
    assert "no pass dump named 'InitMemref2'" in err and "did you mean InitMemRef" in err
    assert main(["dumps", str(build.parent / "nope")]) == 1
    assert "no passes_dump/" in capsys.readouterr().err


def test_help_texts():
    parser = build_parser()
    text = parser.format_help()
    for cmd in ("compile", "dumps", "diff"):
        assert cmd in text
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "diff", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--unified" in proc.stdout and "side-by-side" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "pypto.cli", "compile", "--help"], capture_output=True, text=True)
    assert "@pl.program" in proc.stdout and "--platform" in proc.stdout


def test_compile_of_a_file_without_kernels(tmp_path, capsys):
    f = tmp_path / "empty.py"
    f.write_text("x = 1\n")
    assert main(["compile", str(f), "-o", str(tmp_path / "o")]) == 1
    assert "no @pl.program" in capsys.readouterr().err


def test_compile_leaves_the_environment_as_it_was(tmp_path, monkeypatch):
    import os
    monkeypatch.delenv("PYPTO_DUMP_PASSES", raising=False)
    before = os.environ.get("PYPTO_PROG_BUILD_DIR")
    assert main(["compile", str(JIT_EXAMPLE), "-o", str(tmp_path)]) == 0
    assert "PYPTO_DUMP_PASSES" not in os.environ and os.environ.get("PYPTO_PROG_BUILD_DIR") == before


@pytest.mark.parametrize("example", sorted((ROOT / "examples").rglob("*.py")), ids=lambda p: p.stem)
def test_every_example_compiles_to_well_formed_pto(example, tmp_path, capsys):
    from pypto.codegen.pto.verify import check_well_formed
    assert main(["compile", str(example), "-o", str(tmp_path)]) == 0
    modules = list(tmp_path.rglob("ptoas/*.pto"))
    assert modules, f"{example.name} produced no .pto"
    for pto in modules:
        assert check_well_formed(pto.read_text()) == [], pto
    for build in tmp_path.iterdir():
        assert (build / "report" / "codegen.txt").read_text().count("\n") == 1, "a kernel lacks its .pto"
