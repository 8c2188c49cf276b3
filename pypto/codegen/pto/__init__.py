"""PTO codegen: each AIC / AIV kernel of a final-IR program → one `.pto` module (MLIR text, PTO dialect).

    from pypto.codegen.pto import generate
    modules = generate(compiled.lowered, arch="a2a3")       # {"add_twice": "module attributes {...} {...}"}

The text is what the reference hands to ptoas: constants, `pto.make_tensor_view` per tensor
parameter, `pto.alloc_tile` per tile buffer at its planned address, then the body in
`pto.t<op>` / `scf.*` form with `loc(...)` from the source. Codegen is a strict 1:1
translation of the final IR; a construct it cannot translate raises UnsupportedError
naming it. Emitters live in one module per op family (tile.py, system.py, cross_core.py,
tensor.py), keyed by op name (registry.py).
"""

from __future__ import annotations

from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.codegen.pto.function_emitter import FunctionEmitter
from pypto.codegen.pto.registry import all_emitters, emitter_for, lowered_away_ops

KERNEL_TYPES = (FunctionType.AIC, FunctionType.AIV, FunctionType.InCore)


def is_kernel(func: Function) -> bool:
    return func.func_type in KERNEL_TYPES


def generate_function(func: Function, *, arch: str = "a2a3", emit_tile_addr: bool = True) -> str:
    """One kernel as a complete `.pto` module."""
    body = FunctionEmitter(func, emit_tile_addr=emit_tile_addr).generate()
    return f'module attributes {{pto.target_arch = "{arch}"}} {{\n{body}\n}}\n'


def generate(program: Program, *, arch: str = "a2a3", emit_tile_addr: bool = True) -> dict:
    """{kernel name: `.pto` text} for every AIC / AIV kernel of the program, in program order."""
    return {f.name: generate_function(f, arch=arch, emit_tile_addr=emit_tile_addr)
            for f in program.functions.values() if is_kernel(f)}


def arch_of(platform: str) -> str:
    """The pto.target_arch of a platform name ("a2a3sim" → "a2a3")."""
    return platform[:-3] if platform.endswith("sim") else platform


class PTOCodegen:
    """The reference's `codegen.PTOCodegen().generate(program)`: every kernel's module, concatenated."""

    def __init__(self, arch: str = "a2a3"):
        self.arch = arch

    def generate(self, program: Program, emit_tile_addr: bool = True) -> str:
        return "\n".join(generate(program, arch=self.arch, emit_tile_addr=emit_tile_addr).values())


__all__ = ["generate", "generate_function", "PTOCodegen", "is_kernel", "arch_of", "emitter_for", "all_emitters",
           "lowered_away_ops"]
