"""Importing the DSL leaves sys.excepthook alone; the compiler-style rendering of uncaught pypto
errors is opt-in (`pl.install_excepthook()`), and the CLI renders errors itself."""

import subprocess
import sys
import textwrap


def _run(code: str, **env):
    import os
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.getcwd(), **env}, timeout=120)


def test_import_does_not_install_a_global_excepthook():
    r = _run("""
        import sys
        before = sys.excepthook
        import pypto.language
        from pypto import ir
        import pypto.runtime
        assert sys.excepthook is before, sys.excepthook
    """)
    assert r.returncode == 0, r.stderr


BAD = """
    import pypto.language as pl
    {install}
    pl.parse("@pl.function\\ndef k(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\\n    return pl.no_such_op(x)\\n")
"""


def test_opt_in_hook_renders_a_diagnostic_instead_of_a_traceback():
    plain = _run(BAD.format(install=""))
    hooked = _run(BAD.format(install="pl.install_excepthook()"))
    assert plain.returncode == hooked.returncode == 1
    assert "Traceback" in plain.stderr
    assert "Traceback" not in hooked.stderr and "no_such_op" in hooked.stderr
    assert "PTO_BACKTRACE=1" in hooked.stderr
