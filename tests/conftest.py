"""Suite-wide settings: every pass runs under ROUNDTRIP verification (print → parse → equal),
and compile artifacts go to a temporary directory instead of build_output/."""

import os

import pytest

os.environ.setdefault("PYPTO_VERIFY_LEVEL", "roundtrip")


@pytest.fixture(autouse=True)
def _artifacts_in_tmp(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path_factory.getbasetemp() / "build_output"))
