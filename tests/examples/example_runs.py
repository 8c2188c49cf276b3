"""The example list and one session-wide run per example (with pass dumps on): both example tests
read that one run (its stdout and its passes_dump/ files), so adding an example costs one run, not two."""

from __future__ import annotations

import contextlib
import io
import pathlib
import runpy
from dataclasses import dataclass

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples").rglob("*.py"))


@dataclass(frozen=True)
class ExampleRun:
    stdout: str
    build_dir: pathlib.Path


def example_id(path: pathlib.Path) -> str:
    return f"{path.parent.name}/{path.name}"


def run_once(path: pathlib.Path, cache: dict, tmp_path_factory) -> ExampleRun:
    if path not in cache:
        build = tmp_path_factory.mktemp(path.stem)
        mp = pytest.MonkeyPatch()
        mp.setenv("PYPTO_DUMP_PASSES", "1")
        mp.setenv("PYPTO_PROG_BUILD_DIR", str(build))
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                runpy.run_path(str(path), run_name="__main__")
        finally:
            mp.undo()
        cache[path] = ExampleRun(out.getvalue(), build)
    return cache[path]
