"""`run_example(path)`: each example runs once per session (tests/examples/example_runs.py)."""

import pytest

from example_runs import run_once


@pytest.fixture(scope="session")
def run_example(tmp_path_factory):
    cache: dict = {}
    return lambda path: run_once(path, cache, tmp_path_factory)
