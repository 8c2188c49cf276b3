"""The one call path (pypto.runtime.sim.launch), the one poison convention, the one environment reader,
and the layering of the jit / interop move."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import simkit as K
import pypto
from pypto.ir.dtypes import FP32, INT32
from pypto.ir.expr import Var
from pypto.ir.types import ScalarType, TensorType
from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.sim import SimProgram
from pypto.runtime.sim.launch import launch, run_ranks
from pypto.runtime.sim.poison import POISON_BYTE, POISON_INT_BYTE, poison, poisoned

PACKAGE = Path(pypto.__file__).parent


def _compiled(program) -> CompiledProgram:
    c = CompiledProgram(program, program)
    c._shared["sim"] = SimProgram(program, "a2a3sim", ops=K.OPS)
    return c


def test_a_call_and_launch_are_the_same_path():
    c = _compiled(K.add_program())
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 64, 128), dtype=np.float32)
    out = np.zeros_like(a)
    assert launch(c, [a, b, out]) is None
    np.testing.assert_array_equal(out, a + b)
    np.testing.assert_array_equal(launch(c, [a, b]), a + b)         # return style
    np.testing.assert_array_equal(c(a, b), a + b)


def test_a_chip_run_is_a_world_of_one_rank():
    sim = SimProgram(K.add_program(), "a2a3sim", ops=K.OPS)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 64, 128), dtype=np.float32)
    outs = [np.zeros_like(a), np.zeros_like(a)]
    results = run_ranks(sim, [[(sim.entry_code("main"), [a, b, outs[0]]), (sim.entry_code("main"), [b, a, outs[1]])]])
    assert len(results) == 1 and len(results[0]) == 2            # one rank, its two dispatches in order
    for out, res in zip(outs, results[0]):
        np.testing.assert_array_equal(out, a + b)
        assert res is out


def test_one_poison_convention():
    f = poisoned((3, 4), np.float32)
    assert np.isnan(f).all() and (f.view(np.uint8) == POISON_BYTE).all()
    i = poisoned((2, 2), np.int32)
    assert (i.view(np.uint8) == POISON_INT_BYTE).all()
    import ml_dtypes
    assert np.isnan(poisoned((4,), ml_dtypes.bfloat16).astype(np.float32)).all()
    reused = np.zeros(5, np.int16)
    assert poison(reused) is reused and (reused.view(np.uint8) == POISON_INT_BYTE).all()
    from pypto.runtime.sim.ops import tensor as tensor_ops
    assert tensor_ops.poisoned is poisoned                      # kernels' tensor.create uses the same function


def test_poisoned_out_argument_of_a_kernel_that_writes_nothing():
    from pypto.runtime.worker import ChipWorker
    with ChipWorker() as w:
        t = w.alloc_tensor([4, 4], INT32)
        assert (t.numpy().view(np.uint8) == POISON_INT_BYTE).all()
        assert np.isnan(w.alloc_tensor([2], FP32).numpy()).all()


def _reads_environment(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") and \
                isinstance(node.value, ast.Name) and node.value.id == "os":
            return True
    return False


def test_pypto_environment_variables_are_read_in_one_module():
    readers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if "PYPTO_" in p.read_text() and _reads_environment(ast.parse(p.read_text())))
    # cli.py sets variables around one compile (and restores them); it reads none for itself
    assert readers == ["cli.py", "env.py"], readers


def test_importing_the_language_does_not_import_the_runtime_or_torch():
    code = ("import sys, pypto.language as pl\n"
            "assert not [m for m in sys.modules if m.startswith('pypto.runtime')], 'runtime imported'\n"
            "assert 'torch' not in sys.modules\n"
            "from pypto.runtime.jit import jit\n"
            "assert pl.jit is jit\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)


def test_jit_specializations_key_by_structure_and_symbolic_dims():
    from pypto.runtime.jit import _type_key
    n, m = Var("n", ScalarType(INT32)), Var("n", ScalarType(INT32))        # same name, different dims
    assert _type_key(TensorType([n, 64], FP32)) == _type_key(TensorType([n, 64], FP32))
    assert _type_key(TensorType([n, 64], FP32)) != _type_key(TensorType([m, 64], FP32))
    assert _type_key(TensorType([16, 64], FP32)) != _type_key(TensorType([16, 64], INT32))


def test_interop_is_a_leaf_module():
    tree = ast.parse((PACKAGE / "interop.py").read_text())
    imported = {a.name.split(".")[0] if isinstance(n, ast.Import) else n.module
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in (n.names if isinstance(n, ast.Import) else [n])}
    assert imported <= {"__future__", "sys", "typing", "numpy", "pypto.errors", "torch", "ml_dtypes"}, imported


def test_array_arguments_are_converted_once_per_jit_call(monkeypatch):
    import pypto.interop as interop
    import pypto.language as pl
    from pypto.runtime import jit as jit_module

    @pl.jit
    def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(b, [0, 0], [16, 16])), [0, 0], c)
        return c

    a = np.ones((16, 16), np.float32)
    c = np.zeros_like(a)
    add(a, a, c)
    seen = []
    real = interop.as_numpy
    monkeypatch.setattr(jit_module, "as_numpy", lambda x: seen.append(x) or real(x))
    add(a, a, c)
    assert len(seen) == 3                          # one classification per argument
    np.testing.assert_array_equal(c, 2 * a)
