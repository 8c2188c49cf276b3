"""`kernel_config.py`: the manifest of a build directory — runtime, orchestration entries, kernels.

It follows the reference's layout (RUNTIME_CONFIG, ORCHESTRATION, KERNELS with func_id, name,
source, core_type and a per-parameter IN / OUT / INOUT / SCALAR signature) and adds PYPTO:
what `CompiledProgram.from_dir` needs to reload the build (platform, the final-IR file, the
front-end IR file, the orchestration entries). The file is plain Python literals, read back
with `read_kernel_config` (no code is executed).

    KERNELS = [{"func_id": 0, "name": "add_twice", "source": "ptoas/add_twice.pto", "core_type": "aiv",
                "signature": ["IN", "OUT"]}]
"""

from __future__ import annotations

import ast
import pprint
from pathlib import Path

from pypto.errors import ValueCheckError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.types import ScalarType
from pypto.ir.visitor import collect

CORE_TYPES = {FunctionType.AIC: "aic", FunctionType.AIV: "aiv", FunctionType.InCore: "aiv"}


def signature(func: Function) -> list:
    return ["SCALAR" if isinstance(p.type, ScalarType) else d.name.upper()
            for p, d in zip(func.params, func.param_directions)]


def _members(func: Function) -> list:
    return [c.op.name for c in collect(func.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar))]


def kernel_config(program: Program, *, platform: str, backend_type: str, final_ir: str, frontend_ir: str,
                  pto_sources: dict, orchestration_sources: dict) -> dict:
    kernels = [{"func_id": i, "name": f.name, "source": pto_sources.get(f.name, ""), "core_type": CORE_TYPES[f.func_type],
                "signature": signature(f)}
               for i, f in enumerate(f for f in program.functions.values() if f.func_type in CORE_TYPES)]
    groups = [{"name": f.name, "kind": f.func_type.name, "members": _members(f), "signature": signature(f)}
              for f in program.functions.values() if f.func_type in (FunctionType.Group, FunctionType.Spmd)]
    orchs = [{"source": orchestration_sources.get(f.name, ""), "function_name": f.name, "signature": signature(f)}
             for f in program.functions.values() if f.func_type is FunctionType.Orchestration]
    return {
        "RUNTIME_CONFIG": {"runtime": "tensormap_and_ringbuffer", "aicpu_thread_num": 0},
        "ORCHESTRATION": orchs[0] if orchs else {},
        "ORCHESTRATIONS": orchs,
        "KERNELS": kernels,
        "GROUPS": groups,
        "PYPTO": {"program": program.name, "platform": platform, "backend_type": backend_type,
                  "final_ir": final_ir, "frontend_ir": frontend_ir,
                  "entries": [o["function_name"] for o in orchs]},
    }


def write_kernel_config(path: Path, config: dict) -> None:
    parts = ['"""Build manifest written by pypto: runtime, orchestration entries, kernels (do not edit)."""', ""]
    for key, value in config.items():
        parts.append(f"{key} = {pprint.pformat(value, width=110, sort_dicts=False)}")
        parts.append("")
    Path(path).write_text("\n".join(parts))


def read_kernel_config(path: Path) -> dict:
    """The literal assignments of a kernel_config.py, without executing it."""
    path = Path(path)
    if not path.is_file():
        raise ValueCheckError(f"{path} does not exist; is this a pypto build directory?",
                              hint="compile with ir.compile(prog, output_dir=...) or `pypto compile file.py`")
    out = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out

