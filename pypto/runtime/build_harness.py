"""What a build directory's `debug/run.py` does: reload the build and run it on the simulator.

    python build_output/AddTwice_<ts>/debug/run.py                  # prints OK
    python .../debug/run.py --dim M=64 --scalar n=8 --inputs x.npz   # sizes, scalar values, real inputs

The harness reloads the build from its files (`CompiledProgram.from_dir`, so hand edits to the
final IR are what runs), makes inputs (floats: seeded normal values; integers and bools: zeros,
which keep index tensors in range; or the arrays of `--inputs`), runs the entry twice — the
deterministic schedule and a random one — and prints OK when both runs finish and agree on every
output. A device-platform build runs on its simulator.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from pypto.errors import ValueCheckError

DEFAULT_DYNAMIC_DIM = 16

RUN_PY = '''"""Reload this build and run it on the pypto simulator (written by pypto; see pypto.runtime.build_harness).

    python debug/run.py [--dim NAME=N] [--scalar NAME=V] [--inputs arrays.npz] [--seed S]
"""
import pathlib
import sys

from pypto.runtime.build_harness import main

if __name__ == "__main__":
    sys.exit(main(pathlib.Path(__file__).resolve().parent.parent, sys.argv[1:]))
'''


def _pairs(items: Sequence[str], what: str) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueCheckError(f"{what} {item!r}: write NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def _shape(param, dims: dict) -> tuple:
    from pypto.ir.expr import ConstInt, Var
    shape = []
    for d in param.type.shape:
        if isinstance(d, ConstInt):
            shape.append(int(d.value))
        elif isinstance(d, Var):
            shape.append(int(dims.get(d.name_hint, DEFAULT_DYNAMIC_DIM)))
        else:
            raise ValueCheckError(f"parameter '{param.name_hint}' has a computed dimension; pass its inputs with "
                                  "--inputs arrays.npz")
    return tuple(shape)


def make_arguments(compiled, *, dims: Optional[dict] = None, scalars: Optional[dict] = None,
                   inputs: Optional[dict] = None, seed: int = 0) -> list:
    """Arguments for every parameter of the entry, in order (see the module docstring for the values)."""
    from pypto.ir.enums import ParamDirection
    from pypto.ir.types import ScalarType, TensorType
    dims, scalars, inputs = dims or {}, scalars or {}, inputs or {}
    rng = np.random.default_rng(seed)
    f = compiled.function
    args = []
    for p, direction in zip(f.params, f.param_directions):
        name = p.name_hint
        if isinstance(p.type, ScalarType):
            dtype = p.type.dtype.to_numpy()
            raw = scalars.get(name, "1")
            args.append(float(raw) if np.issubdtype(dtype, np.floating) else int(raw))
            continue
        if not isinstance(p.type, TensorType):
            raise ValueCheckError(f"parameter '{name}' of type {p.type} cannot be made up by the harness")
        dtype = p.type.dtype.to_numpy()
        if name in inputs:
            args.append(np.ascontiguousarray(inputs[name], dtype=dtype))
            continue
        shape = _shape(p, dims)
        is_float = np.issubdtype(dtype, np.floating) or dtype.kind == "V"      # "V": bfloat16 / fp8 (ml_dtypes)
        if direction is ParamDirection.Out or not is_float:
            args.append(np.zeros(shape, dtype))
        else:
            args.append(rng.standard_normal(shape).astype(dtype))
    return args


def run_build(path, *, dims=None, scalars=None, inputs=None, seed: int = 0) -> list:
    """Reload the build at `path`, run it under two schedules, and return the outputs (they agree)."""
    from pypto.ir.enums import ParamDirection
    from pypto.runtime.compiled_program import CompiledProgram
    from pypto.runtime.config import RunConfig
    compiled = CompiledProgram.from_dir(path)
    platform = compiled.platform if compiled.platform.endswith("sim") else compiled.platform + "sim"
    if platform != compiled.platform:
        compiled = CompiledProgram(compiled.program, compiled.lowered, platform=platform, output_dir=Path(path))
    outputs = [i for i, d in enumerate(compiled.function.param_directions) if d is not ParamDirection.In]
    results = []
    for config in (RunConfig(platform=platform), RunConfig(platform=platform, sim_schedule="random", sim_seed=seed)):
        args = make_arguments(compiled, dims=dims, scalars=scalars, inputs=inputs, seed=seed)
        returned = compiled(*args, config=config)
        results.append([args[i] for i in outputs] + ([] if returned is None else list(
            returned if isinstance(returned, (list, tuple)) else [returned])))
    for k, (a, b) in enumerate(zip(*results)):
        if not np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True):
            raise AssertionError(f"output {k} differs between the deterministic and a random schedule "
                                 f"(seed {seed}): the program has a race or a missing dependency")
    return results[0]


def main(build: Path, argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="debug/run.py", description="Reload this build and run it on the simulator.")
    parser.add_argument("--dim", action="append", default=[], help="a dynamic dimension, NAME=N (default 16)")
    parser.add_argument("--scalar", action="append", default=[], help="a scalar parameter, NAME=VALUE (default 1)")
    parser.add_argument("--inputs", help="an .npz file of input arrays, by parameter name")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(list(argv))
    inputs = dict(np.load(args.inputs)) if args.inputs else None
    outputs = run_build(build, dims=_pairs(args.dim, "--dim"), scalars=_pairs(args.scalar, "--scalar"),
                        inputs=inputs, seed=args.seed)
    print(f"{build.name}: ran, {len(outputs)} output(s) agree across schedules")
    print("OK")
    return 0
