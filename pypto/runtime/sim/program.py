"""A final-IR program prepared for simulation: every function generated once, run many times.

    sim = SimProgram(lowered_program, "a2a3sim", artifact_dir=None)
    value = sim.run("main", [a, b, out])       # numpy arrays / scalars in orchestration order (tests)

`functions` maps function names to FunctionCode (source, callable, line map). With an
artifact dir the generated sources are written there (`kernels/sim/<name>.py`,
`orchestration/<name>.sim.py`) and executed from those paths, so debuggers and tracebacks
show the real files.
"""

from __future__ import annotations

from pathlib import Path

from typing import Optional

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call
from pypto.ir.function import Function, Program
from pypto.ir.platform import Platform, get_platform
from pypto.ir.visitor import collect
from pypto.runtime.sim.blocking import is_blocking_op
from pypto.runtime.sim.codegen import HOST_TYPES, FunctionCode, generate_function
from pypto.runtime.sim.data_paths import check_data_paths
from pypto.runtime.sim.ops import SIM_OPS

_SKIPPED = (FunctionType.Inline,)


class SimProgram:
    def __init__(self, program: Program, platform, *, ops: Optional[dict] = None,
                 artifact_dir: Optional[Path] = None, fast_paths: bool = True, strict_memory: bool = False):
        self.program = program
        self.platform: Platform = platform if isinstance(platform, Platform) else get_platform(platform)
        self.ops = SIM_OPS if ops is None else ops
        if strict_memory:                          # every op checks its operands' bytes were written
            from pypto.runtime.sim.fresh_memory import strict_ops
            self.ops, fast_paths = strict_ops(self.ops), False
        self.artifact_dir = Path(artifact_dir) if artifact_dir is not None else None
        self._yield_memo: dict = {}
        self.functions: dict = {}
        self.by_filename: dict = {}
        for f in program.functions.values():
            if f.func_type in _SKIPPED:
                continue
            if f.func_type not in HOST_TYPES:
                check_data_paths(f, self.platform)      # the chip's memory graph, before anything runs
            code = generate_function(f, program, self.ops, self.needs_yield, self._filename(f), fast_paths=fast_paths)
            self.functions[f.name] = code
            self.by_filename[code.filename] = code
            if self.artifact_dir is not None:
                Path(code.filename).write_text(code.source)

    def _filename(self, f: Function) -> str:
        if self.artifact_dir is None:
            return f"<pypto-sim {f.name}>"
        sub = "orchestration" if f.func_type in HOST_TYPES else "kernels/sim"
        d = self.artifact_dir / sub
        d.mkdir(parents=True, exist_ok=True)
        return str(d / (f"{f.name}.sim.py" if sub == "orchestration" else f"{f.name}.py"))

    def needs_yield(self, name: str) -> bool:
        """Host functions always can block; a kernel can when it holds a blocking op or calls one that does."""
        memo = self._yield_memo
        if name in memo:
            return memo[name]
        f = self.program.get_function(name)
        if f is None:
            return False
        if f.func_type in HOST_TYPES:
            memo[name] = True
            return True
        if f.func_type in (FunctionType.Group, FunctionType.Spmd):
            memo[name] = False
            return False
        memo[name] = False                         # recursion guard
        result = False
        for call in collect(f.body, lambda n: isinstance(n, Call)):
            if call.is_function_call():
                result = result or self.needs_yield(call.op.name)
            else:
                fn = self.ops.get(call.op.name)
                result = result or (fn is not None and is_blocking_op(fn))
        memo[name] = result
        return result

    def entry_names(self) -> list:
        return [n for n, c in self.functions.items() if c.func.func_type is FunctionType.Orchestration]

    def entry_code(self, entry: str):
        """The FunctionCode of a host (Orchestration) function, the thing a call dispatches."""
        code = self.functions.get(entry)
        if code is None or code.func.func_type not in HOST_TYPES:
            raise UnsupportedError(f"'{entry}' is not a host (Orchestration) function of the program")
        return code

    def run(self, entry: str, args: list, *, schedule: str = "deterministic", seed: Optional[int] = None,
            window: int = 64):
        """Run `entry` on simulator-side arguments (no binding, no write-back): a world of one, one dispatch."""
        from pypto.runtime.sim.launch import run_ranks
        return run_ranks(self, [[(self.entry_code(entry), args)]], schedule=schedule, seed=seed, window=window)[0][0]
