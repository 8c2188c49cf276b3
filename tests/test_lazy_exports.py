"""The compatibility import paths (pypto.lazy_exports) name the right objects, resolve them only
on use — importing the path imports nothing of the higher layer — and reject unknown names."""

import subprocess
import sys

import pytest


def test_compat_paths_name_the_real_objects():
    import pypto.ir.distributed_compiled_program as dcp
    import pypto.ir.instruments as ir_instruments
    import pypto.ir.pass_manager as pm
    import pypto.passes
    import pypto.runtime.distributed
    from pypto.pypto_core import passes
    assert pm.PassManager is pypto.passes.PassManager and pm.OptimizationStrategy is pypto.passes.OptimizationStrategy
    assert dcp.DistributedConfig is pypto.runtime.distributed.DistributedConfig
    assert ir_instruments.RoundtripInstrument is pypto.passes.RoundtripInstrument
    assert passes.convert_to_ssa().name == "ConvertToSSA" and passes.PassContext is pypto.passes.PassContext
    assert "PassManager" in dir(pm) and "init_mem_ref" in dir(passes)


def test_unknown_names_are_attribute_errors():
    import pypto.ir.pass_manager as pm
    from pypto.pypto_core import passes
    with pytest.raises(AttributeError, match="pypto.ir.pass_manager.*NoSuchThing"):
        pm.NoSuchThing
    with pytest.raises(AttributeError, match="no_such_pass"):
        passes.no_such_pass


def test_the_reference_roundtrip_instrument_defaults_to_the_dsl_parser():
    import pypto.language as pl
    from pypto.ir.instruments import make_roundtrip_instrument
    assert make_roundtrip_instrument().parse is pl.parse


def test_importing_a_compat_path_imports_no_higher_layer():
    code = ("import sys, pypto.ir, pypto.ir.pass_manager, pypto.ir.instruments, "
            "pypto.ir.distributed_compiled_program, pypto.pypto_core; "
            "print(sorted(m for m in sys.modules if m.startswith(('pypto.passes', 'pypto.runtime', 'pypto.language'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=".")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
