"""`validate_pass_ir_codegen_results(path, tensors, expected)`: check every dumped pass IR by value.

The reference's spelling of the per-pass check for a build that already exists: each file of a
passes_dump/ folder (or one `.py` IR file) is read back with `pl.loads`, run with reference
semantics (the numpy interpreter that `numpy_codegen` / `torch_codegen` programs also run on), and
its outputs are compared by name with `expected`. It prints one block per file and raises at the
first file whose result is wrong, naming the file, the tensor and the max difference — so the
pass that broke a kernel is the first failing `NN_after_<Pass>.py`.

    validate_pass_ir_codegen_results("build_output/my_prog/passes_dump/", {"a": a, "b": b}, {"out": a + b})
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from pypto.debug.reference_run import NotRunnable, entry_function, run_reference
from pypto.errors import ValueCheckError
from pypto.ir.enums import ParamDirection
from pypto.ir.types import TensorType
from pypto.runtime.validate_ir import compare_outputs


def _files(path: Path) -> list:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ValueCheckError(f"validate_pass_ir_codegen_results: {path} is neither a passes_dump folder nor a file")
    files = sorted(p for p in path.glob("*.py") if p.name[:2].isdigit())
    if not files:
        raise ValueCheckError(f"validate_pass_ir_codegen_results: {path} holds no NN_*.py pass dumps",
                              hint="compile with dump_passes=True")
    return files


def _arguments(program, tensors: dict, expected: dict) -> list:
    """The entry's arguments by parameter name; an Out parameter not given starts as zeros."""
    from pypto.interop import as_numpy
    args = []
    func = entry_function(program)
    for p, d in zip(func.params, func.param_directions):
        name = p.name_hint
        if name in tensors:
            value = as_numpy(tensors[name])
            args.append(np.array(value if value is not None else tensors[name], copy=True))
        elif d is not ParamDirection.In and isinstance(p.type, TensorType) and p.type.static_shape():
            shape = np.shape(as_numpy(expected[name])) if name in expected else p.type.static_shape()
            args.append(np.zeros(shape, p.type.dtype.to_numpy()))
        else:
            raise ValueCheckError(f"validate_pass_ir_codegen_results: no value for parameter '{name}' of "
                                  f"'{func.name}'", hint="give every input by its parameter name in `tensors`")
    return args


def validate_pass_ir_codegen_results(path, tensors: dict, expected: dict, *, rtol: float = 5e-2,
                                     atol: float = 5e-2, platform: str = "a2a3", quiet: bool = False) -> list:
    """Run every dumped IR under `path` and compare its outputs with `expected` (by Out parameter name,
    or "return"). Returns [(file name, {tensor: max abs diff})]; AssertionError at the first wrong file."""
    from pypto.interop import as_numpy
    from pypto.language import loads
    if not expected:
        raise ValueCheckError("validate_pass_ir_codegen_results: `expected` is empty: nothing to compare")
    platform = platform[:-3] if platform.endswith("sim") else platform
    results = []
    for file in _files(Path(path)):
        program = loads(str(file))
        try:
            got = run_reference(program, _arguments(program, tensors, expected), platform=platform)
        except NotRunnable as e:
            if not quiet:
                print(f"{'=' * 20} {file.stem} {'=' * 20}\nnot runnable with reference semantics: {e.message}")
            results.append((file.name, None))
            continue
        wrong = dict(compare_outputs(got, expected, rtol, atol))
        diffs = {}
        if not quiet:
            print(f"{'=' * 20} {file.stem} {'=' * 20}")
        for name, want in expected.items():
            if name in wrong:
                diffs[name] = wrong[name]
            else:
                a = np.asarray(got[name], np.float64)
                b = np.asarray(as_numpy(want) if as_numpy(want) is not None else want, np.float64)
                diffs[name] = float(np.max(np.abs(a - b))) if a.size else 0.0
            if not quiet:
                print(f"validate tensor: '{name}', max_abs_diff: {diffs[name]:.6e}, pass: {name not in wrong}")
        results.append((file.name, diffs))
        if wrong:
            worst = max(wrong, key=wrong.get)
            raise AssertionError(f"{file}: '{worst}' differs from the expected value (max abs diff "
                                 f"{wrong[worst]:.6e}, rtol={rtol}, atol={atol}): the pass that wrote this file "
                                 "(or an earlier one) changed the result")
    return results
