"""CompiledProgram: the result of `ir.compile` / `run` / `kernel.compile`, callable like a function.

    compiled = ir.compile(Prog)
    compiled(a, b, out)          # in place: all parameters given, outputs written into `out`; returns None
    out = compiled(a, b)         # return style: inputs only, outputs allocated and returned

Arguments follow the Orchestration function's parameter order; numpy arrays (or torch CPU
tensors) of the declared dtype and shape, Python scalars for Scalar parameters. A program
with several Orchestration functions that no other calls is indexed by name, `compiled["add"](...)`
or `compiled.add(...)`; calling it plainly would have to guess, so it raises TypeError. Each such
entry is a program of its own (the function and what it calls), whose build directory is
`next_levels/<name>/` under the whole program's.
The simulator code is generated on the first call (or at compile time when artifacts are
written) and reused afterwards.

    compiled = CompiledProgram.from_dir("build_output/AddTwice_20260101_120000_000001")   # reload a build
    compiled.param_names, compiled.output_indices, compiled.has_return, compiled.platform

`compiled.output_dir` is the build directory (pypto.runtime.artifacts): when the compile wrote
none (no dumps, no output_dir=), the first read of `output_dir` writes it, so the edit-run loop
pays for files only when someone looks at them. `debug/run.py` in it reloads and runs the build.
`compiled.prepare()` is a ChipWorker with this program registered (`with compiled.prepare() as rt:
rt(a, b, out)`); `compiled.validate_ir(a, b, out)` (or `(tensors, expected)` by name) checks every
pass dump numerically.

DeviceTensor arguments (pypto.runtime.worker) run on their ChipWorker without host copies;
inside `with ChipWorker(...)` every call runs on that worker. Either way a call is
`pypto.runtime.sim.launch.launch` (binding, one scheduler loop, write-back).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.function import Program
from pypto.runtime.config import RunConfig, backend_type_of


class CompiledProgram:
    def __init__(self, program: Program, lowered: Program, *, platform: str = "a2a3sim",
                 output_dir: Optional[Path] = None, entry: Optional[str] = None, _shared=None, _parent=None):
        self.program = program
        self.lowered = lowered
        self.platform = platform
        self.backend_type = backend_type_of(platform)
        self._shared = _shared if _shared is not None else {"sim": None, "build_dir": None}
        if output_dir is not None:
            self._shared["build_dir"] = Path(output_dir)
        entries = [f.name for f in lowered.functions.values() if f.func_type is FunctionType.Orchestration]
        self._parent = _parent                   # the whole program, for one of its several entries
        self._entry_programs: dict = {}
        self.ambiguous = False                   # several top-level entries: a plain call must name one
        if entry is None:
            if not entries:
                raise UnsupportedError(f"program '{lowered.name}' has no Orchestration function to call",
                                       _caller_span(), hint="mark the host function with @pl.function(type=pl.FunctionType.Orchestration)")
            tops = _top_level(lowered, entries)
            self.ambiguous = len(tops) > 1
            entry = tops[0] if tops else entries[0]
        self.entries = entries
        self.entry = entry
        self.function = lowered.functions[entry]
        f = self.function
        self.param_names = [p.name_hint for p in f.params]
        self.output_indices = [i for i, d in enumerate(f.param_directions) if d is not ParamDirection.In]
        self.has_return = bool(f.return_types)
        self._n_inputs = sum(1 for d in f.param_directions if d is not ParamDirection.Out)
        self._plans = None
        self._pool: dict = {}                    # private Out / InOut buffers, reused across in-place calls

    # ------------------------------------------------------------------ build directory
    @property
    def build_dir(self) -> Optional[Path]:
        """The build directory if one was written (reading this never writes one; `output_dir` does)."""
        return self._shared["build_dir"]

    @property
    def output_dir(self) -> Path:
        """The build directory, written now (timestamped under $PYPTO_PROG_BUILD_DIR, or next_levels/<entry>/
        of the whole program's for one of several entries) if the compile wrote none."""
        if self._shared["build_dir"] is None:
            from pypto.runtime.artifacts import materialize_build_dir
            where = None if self._parent is None else self._parent.output_dir / "next_levels" / self.entry
            materialize_build_dir(self, where)
        return self._shared["build_dir"]

    @property
    def name(self) -> str:
        """The Orchestration function a call runs."""
        return self.entry

    def __fspath__(self) -> str:
        return str(self.output_dir)

    # ------------------------------------------------------------------ simulator
    @property
    def sim(self):
        """The SimProgram (generated once, shared by all entries of this program)."""
        sim = self._shared["sim"]
        if sim is None:
            from pypto.runtime.sim.program import SimProgram
            sim = self._shared["sim"] = SimProgram(self.lowered, self.platform, artifact_dir=self.build_dir)
        return sim

    def _sim_for(self, config: RunConfig):
        """The strict-memory SimProgram when the config asks for it (generated once), else `sim`."""
        from pypto.runtime.sim.timeline import wants_timeline
        if wants_timeline(config):              # every op reports to the swimlane recorder (no fast paths)
            key = ("sim_traced", bool(config.sim_strict_memory))
            if self._shared.get(key) is None:
                from pypto.runtime.sim.ops import SIM_OPS
                from pypto.runtime.sim.program import SimProgram
                from pypto.runtime.sim.timeline import traced_ops
                self._shared[key] = SimProgram(self.lowered, self.platform, ops=traced_ops(SIM_OPS), fast_paths=False,
                                               strict_memory=config.sim_strict_memory)
            return self._shared[key]
        if not config.sim_strict_memory:
            return self.sim
        sim = self._shared.get("sim_strict")
        if sim is None:
            from pypto.runtime.sim.program import SimProgram
            sim = self._shared["sim_strict"] = SimProgram(self.lowered, self.platform, strict_memory=True)
        return sim

    def __getitem__(self, name: str) -> "CompiledProgram":
        if name not in self.entries:
            raise KeyError(f"no Orchestration function '{name}' (have: {', '.join(self.entries)})")
        if not self.ambiguous:                   # one program: another view of it
            return CompiledProgram(self.program, self.lowered, platform=self.platform, entry=name,
                                   _shared=self._shared)
        sub = self._entry_programs.get(name)
        if sub is None:                          # one of several entries: a program of its own
            sub = self._entry_programs[name] = CompiledProgram(
                self.program, _reachable_from(self.lowered, name), platform=self.platform, entry=name, _parent=self)
        return sub

    def __getattr__(self, name: str):
        """`compiled.add` is `compiled["add"]` for an entry of a program with several."""
        entries = self.__dict__.get("entries") or ()
        if self.__dict__.get("ambiguous") and name in entries:
            return self[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # ------------------------------------------------------------------ reloading a build
    @classmethod
    def from_dir(cls, path, *, entry: Optional[str] = None) -> "CompiledProgram":
        """Reload a compiled program from its build directory (it re-parses the final IR written there)."""
        from pypto.runtime.artifacts import load_build_dir
        return load_build_dir(path, entry=entry)

    load = from_dir

    @property
    def orchestration_names(self) -> list:
        return list(self.entries)

    # ------------------------------------------------------------------ running
    def prepare(self, config: Optional[RunConfig] = None):
        """A ChipWorker with this program registered, callable like the program (`with ... as rt: rt(...)`)."""
        from pypto.runtime.worker import PreparedProgram
        return PreparedProgram(self, config=config)

    def validate_ir(self, *args, expected: Optional[dict] = None, rtol: float = 5e-2, atol: float = 5e-2):
        """Run the program as it stood after every pass (each passes_dump/ file, finished by the passes after
        it) on the simulator and compare its outputs; an AssertionError names the first pass that diverges.
        Arguments like a call (`validate_ir(a, b, out)`, the first dump's result is the reference unless
        `expected=` is given) or by name (`validate_ir(tensors, expected)`); returns the StageReport."""
        from pypto.runtime.validate_ir import validate_pass_dumps
        if args and isinstance(args[0], dict):
            if len(args) > 2 or (len(args) == 2 and not isinstance(args[1], dict)):
                raise TypeError("validate_ir(tensors, expected) takes two dicts by parameter name")
            tensors, expected = args[0], args[1] if len(args) == 2 else expected
            return validate_pass_dumps(self, tensors=tensors, expected=expected, rtol=rtol, atol=atol)
        return validate_pass_dumps(self, *args, expected=expected, rtol=rtol, atol=atol)

    def __call__(self, *args, config: Optional[RunConfig] = None):
        if self.ambiguous:
            raise TypeError(f"program '{self.lowered.name}' has several Orchestration entries "
                            f"({', '.join(self.orchestration_names)}); select one explicitly: "
                            f"compiled[{self.orchestration_names[0]!r}](...)")
        from pypto.runtime.sim.launch import launch
        from pypto.runtime.worker import DeviceTensor, current_worker
        worker = current_worker()
        if worker is None:
            device = next((a for a in args if isinstance(a, DeviceTensor)), None)
            worker = device.worker if device is not None else None
        if worker is not None:                   # DeviceTensors (or `with worker:`) run on their ChipWorker
            return worker.run(self, *args)
        return launch(self, args, config=config)

    def __repr__(self) -> str:
        return f"CompiledProgram({self.lowered.name or self.entry!r}, platform={self.platform!r})"


def _callees(f) -> list:
    from pypto.ir.expr import Call, GlobalVar
    from pypto.ir.visitor import collect
    return [c.op.name for c in collect(f.body, lambda n: isinstance(n, Call) and isinstance(n.op, GlobalVar))]


def _top_level(lowered: Program, entries: list) -> list:
    """The Orchestration functions no other function of the program calls (the ones a caller picks from)."""
    called = {name for f in lowered.functions.values() for name in _callees(f)}
    return [e for e in entries if e not in called]


def _reachable_from(lowered: Program, entry: str) -> Program:
    """The program of `entry` and every function it calls, directly or not (in the program's order)."""
    keep, todo = set(), [entry]
    while todo:
        name = todo.pop()
        if name in keep or name not in lowered.functions:
            continue
        keep.add(name)
        todo += _callees(lowered.functions[name])
    return Program([f for f in lowered.functions.values() if f.name in keep], lowered.name)


def _caller_span():
    """The user's line that asked for this program (a mistake found while building it points there)."""
    from pypto.call_site import user_call_span
    return user_call_span()
