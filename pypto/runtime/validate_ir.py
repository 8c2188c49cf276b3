"""`CompiledProgram.validate_ir(tensors, expected)`: which pass made the numbers wrong?

Each file of the build's passes_dump/ is the program as it stood after one pass. This parses it,
runs the rest of the pipeline on it (the passes after that one), runs the result on the simulator
with the given inputs and compares every expected output. The first dump whose outputs diverge
names the pass that broke the program (an earlier one that diverges too is reported instead: the
walk goes in pipeline order).

    compiled = ir.compile(Prog, dump_passes=True)
    compiled.validate_ir({"a": a, "b": b}, {"out": a + b})
"""

from __future__ import annotations

import re

import numpy as np

from pypto.errors import ValueCheckError

_AFTER = re.compile(r"^\d+_after_(\w+)\.py$")


def _arguments(compiled, tensors: dict, expected: dict) -> list:
    from pypto.interop import as_numpy
    from pypto.ir.enums import ParamDirection
    from pypto.ir.types import TensorType
    args = []
    f = compiled.function
    for p, direction in zip(f.params, f.param_directions):
        name = p.name_hint
        if name in tensors:
            value = tensors[name]
            arr = as_numpy(value)
            args.append(np.array(arr, copy=True) if arr is not None else value)
        elif direction is ParamDirection.Out and name in expected:
            ref = as_numpy(expected[name])
            args.append(np.zeros(np.shape(ref), p.type.dtype.to_numpy()))
        elif direction is ParamDirection.Out and isinstance(p.type, TensorType) and p.type.static_shape():
            args.append(np.zeros(p.type.static_shape(), p.type.dtype.to_numpy()))
        else:
            raise ValueCheckError(f"validate_ir: no value for parameter '{name}'",
                                  hint="give every input in `tensors` (and every output's golden in `expected`)")
    return args


def _run(lowered, compiled, tensors: dict, expected: dict) -> dict:
    from pypto.runtime.compiled_program import CompiledProgram
    platform = compiled.platform if compiled.platform.endswith("sim") else compiled.platform + "sim"
    program = CompiledProgram(lowered, lowered, platform=platform, entry=compiled.entry)
    args = _arguments(program, tensors, expected)
    program(*args)
    return {p.name_hint: a for p, a in zip(program.function.params, args)}


def _differences(outputs: dict, expected: dict, rtol: float, atol: float) -> list:
    from pypto.interop import as_numpy
    bad = []
    for name, want in expected.items():
        if name not in outputs:
            raise ValueCheckError(f"validate_ir: expected output '{name}' is not a parameter of the entry",
                                  hint="outputs are keyed by the Out / InOut parameter's name")
        got = np.asarray(outputs[name], dtype=np.float64)
        ref = np.asarray(as_numpy(want) if as_numpy(want) is not None else want, dtype=np.float64)
        if got.shape != ref.shape or not np.allclose(got, ref, rtol=rtol, atol=atol, equal_nan=False):
            err = float(np.nanmax(np.abs(got - ref))) if got.shape == ref.shape else float("nan")
            bad.append(f"'{name}' (max abs error {err:.3g})")
    return bad


def validate_pass_dumps(compiled, tensors: dict, expected: dict, *, rtol: float, atol: float) -> None:
    from pypto.language import parse
    from pypto.passes import PassContext, PassManager
    build = compiled.build_dir
    dumps = build / "passes_dump" if build is not None else None
    if dumps is None or not dumps.is_dir():
        raise ValueCheckError(f"validate_ir: no passes_dump/ in {build or 'this program (it wrote no build)'}",
                              hint="compile with dump_passes=True")
    manager = PassManager.get_strategy()
    names = manager.pass_names()
    base = compiled.platform[:-3] if compiled.platform.endswith("sim") else compiled.platform
    files = sorted(p for p in dumps.iterdir() if p.name == "00_frontend.py" or _AFTER.match(p.name))
    if not files:
        raise ValueCheckError(f"validate_ir: {dumps} holds no pass dumps")
    for path in files:
        match = _AFTER.match(path.name)
        after = match.group(1) if match else None
        stage = f"after {after}" if after else "as given"
        with PassContext(platform=base, parse=parse):
            program = parse(path.read_text(), str(path))
            if after is None:
                program = manager.run(program)
            elif after != names[-1]:
                program = manager.run(program, after=after)
        try:
            outputs = _run(program, compiled, tensors, expected)
        except Exception as e:
            raise AssertionError(f"validate_ir: the program {stage} ({path.name}) fails to run: {e}") from e
        bad = _differences(outputs, expected, rtol, atol)
        if bad:
            raise AssertionError(f"validate_ir: the program {stage} ({path.name}) gives wrong {', '.join(bad)}")
