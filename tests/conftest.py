"""Suite-wide settings: every pass runs under ROUNDTRIP verification (print → parse → equal),
with the DSL parser handed to the outermost PassContext (the passes layer does not import the
language layer), and compile artifacts go to a temporary directory instead of build_output/."""

import os

import pytest

os.environ.setdefault("PYPTO_VERIFY_LEVEL", "roundtrip")


@pytest.fixture(scope="session", autouse=True)
def _roundtrip_parser():
    from pypto.language import parse
    from pypto.passes import PassContext
    with PassContext(parse=parse):
        yield


@pytest.fixture(autouse=True)
def _artifacts_in_tmp(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path_factory.getbasetemp() / "build_output"))
