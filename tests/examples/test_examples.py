"""Every example under examples/ runs on a2a3sim, checks itself against numpy and prints OK."""

import pytest

from example_runs import EXAMPLES, example_id


@pytest.mark.parametrize("path", EXAMPLES, ids=example_id)
def test_example_runs_and_prints_ok(path, run_example):
    assert run_example(path).stdout.strip().splitlines()[-1] == "OK"
