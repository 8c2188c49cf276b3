"""Distributed (multi-rank) programs: DistributedConfig, DistributedCompiledProgram, the host orchestrator.

A distributed program has one HOST-level orchestrator (`@pl.function(level=pl.Level.HOST,
role=pl.Role.Orchestrator)` or `@pl.jit.host`) and chip functions it dispatches with
`device=r`. `ir.compile(Prog, platform=..., distributed_config=DistributedConfig(device_ids=[0, 1]))`
compiles the chip functions through the Default pipeline (once: every rank runs the same
code) and keeps the host orchestrator as IR. Calling the result with host numpy arrays runs
the host orchestrator on the simulator's World: `pld.alloc_window_buffer` makes a symmetric
zeroed window per rank, `pld.window` views it, `x[r]` picks rank r's shard of a stacked
host array, and each `self.chip(..., device=r)` becomes a dispatch on rank r. The host
orchestrator is compiled to simulator code by the chip orchestration's generator
(pypto.runtime.sim.host_level); a call goes through pypto.runtime.sim.launch like any other: all
ranks run together under its one scheduler loop, and Out / InOut host arrays are written back
only when every rank finished.

    compiled = ir.compile(Prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    compiled(x, y)                                    # x, y: [NR, ...] stacked host arrays
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from pypto.errors import TypeCheckError
from pypto.ir.enums import Level, ParamDirection, Role
from pypto.ir.function import Function, Program
from pypto.ir.types import DistributedTensorType


@dataclass
class DistributedConfig:
    """Which devices form the world (on the simulator: how many ranks). Other fields are the reference's knobs."""
    device_ids: list = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0

    def __post_init__(self):
        self.device_ids = list(self.device_ids)
        if not self.device_ids:
            raise ValueError("DistributedConfig.device_ids must name at least one device")
        if len(set(self.device_ids)) != len(self.device_ids):
            raise ValueError(f"DistributedConfig.device_ids has duplicates: {self.device_ids}")

    @property
    def world_size(self) -> int:
        return len(self.device_ids)


def is_host_orchestrator(f: Function) -> bool:
    return f.level is Level.HOST and f.role in (Role.Orchestrator, None)


def is_host_sub_worker(f: Function) -> bool:
    return f.level is Level.HOST and f.role is Role.SubWorker


def _host_count_span(program: Program, hosts: list):
    """Where to point when the HOST orchestrator count is wrong: a role-less HOST function among
    several, else the last one; with none, a HOST function of another role (the likely mislabel),
    else the program."""
    if hosts:
        return next((f.span for f in hosts if f.role is None), hosts[-1].span)
    other = [f for f in program.functions.values() if f.level is Level.HOST]
    return other[0].span if other else program.span


def split_host(program: Program):
    """(host orchestrator, chip-only program, {name: HOST SubWorker})."""
    hosts = [f for f in program.functions.values() if is_host_orchestrator(f)]
    if len(hosts) != 1:
        names = ", ".join(f"'{f.name}'" for f in hosts)
        raise TypeCheckError(f"a distributed program needs exactly one HOST orchestrator, found {len(hosts)}"
                             + (f" ({names}; a HOST function without role= is one)" if hosts else ""),
                             _host_count_span(program, hosts),
                             hint="mark it @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator), and a "
                                  "Python callback role=pl.Role.SubWorker")
    subs = {f.name: f for f in program.functions.values() if is_host_sub_worker(f)}
    chip = Program([f for f in program.functions.values() if f is not hosts[0] and f.name not in subs], program.name)
    return hosts[0], chip, subs


class DistributedCompiledProgram:
    """A compiled distributed program: call it with the HOST orchestrator's host arrays (in place)."""

    def __init__(self, program: Program, host: Function, chip, config: DistributedConfig, platform: str,
                 sub_workers: Optional[dict] = None):
        self.program = program
        self.host_function = host
        self.sub_workers = dict(sub_workers or {})  # HOST SubWorkers by name: Python callbacks of the host
        self.chip = chip                          # the CompiledProgram of the chip functions
        self.distributed_config = config
        self.platform = platform
        self.param_names = [p.name_hint for p in host.params]
        self.last_windows: list = []              # the World's window buffers of the last call (for tests)
        self.function = host                      # what a call binds its arguments against (launch)
        # Out arrays come back in place; a host that returns its Out tensors may also be called with its
        # inputs only (return style): the Out arrays are then allocated for the call and returned
        outs = [d for d in host.param_directions if d is ParamDirection.Out]
        self.has_return = bool(host.return_types) and bool(outs)
        self._n_inputs = len(host.params) - len(outs)
        self._plans = None
        self._pool: dict = {}
        self._host_code = None

    @property
    def build_dir(self):
        return self.chip.build_dir            # None unless the compile (or a read of output_dir) wrote one

    @property
    def output_dir(self):
        """The build directory, written on first read when the compile wrote none: the chip build, the host
        orchestrator (`orchestration/<host>.host_orch.py`) and one `next_levels/<variant>/` sub-build per
        host-collective builtin (`builtin.tensor.allreduce__sum__fp32`, the reference's variant names)."""
        if self.chip.build_dir is None:
            out = self.chip.output_dir
            write_host_artifacts(self, out)
        return self.chip.build_dir

    @property
    def lowered(self):
        return self.chip.lowered

    def _sim_for(self, config):
        return self.chip._sim_for(config)

    def host_code(self):
        """The HOST orchestrator as simulator code (generated once; written to the build dir when there is one)."""
        if self._host_code is None:
            from pypto.runtime.sim.host_level import generate_host_function
            out = self.build_dir
            filename = f"<pypto-sim {self.host_function.name}>"
            if out is not None:                 # written there and compiled from the file
                filename = str(out / "orchestration" / f"{self.host_function.name}.host_orch.py")
            self._host_code = generate_host_function(self.host_function, self.chip.lowered, filename,
                                                     self.sub_workers)
        return self._host_code

    @property
    def runtime_bound_callbacks(self) -> list:
        """Names of the abstract (`...`) SubWorkers, which `prepare(callbacks={name: fn})` must bind."""
        return [n for n, f in self.sub_workers.items() if f.requires_runtime_binding]

    def prepare(self, config=None, *, extra_compiled=(), callbacks=None, **options):
        """A DistributedWorker for this program (and `extra_compiled`): dispatch many times on one world."""
        from pypto.runtime.distributed_worker import DistributedWorker
        return DistributedWorker([self, *extra_compiled], config=config, callbacks=callbacks, **options)

    def __call__(self, *args, config=None):
        from pypto.runtime.sim.launch import launch
        return launch(self, args, config=config)

    def __repr__(self) -> str:
        return f"DistributedCompiledProgram({self.program.name!r}, platform={self.platform!r}, " \
               f"ranks={self.distributed_config.world_size})"


def compile_distributed(program: Program, distributed_config: DistributedConfig, *, platform: str, strategy=None,
                        output_dir=None, dump_passes=False, save_kernels: bool = False):
    """Run the whole program (HOST orchestrator included) through the Default pipeline, then split it.

    The pipeline's distributed passes (SynthesizeAllReduceSignals, MaterializeCommDomainScopes,
    LowerHostTensorCollectives) shape the host orchestrator and add the builtin chip programs; the
    chip functions become a CompiledProgram; the host orchestrator becomes simulator code of its own
    (pypto.runtime.sim.host_level), generated on the first call or now when there is a build directory.
    """
    from pathlib import Path

    from pypto.runtime.compile import lower, write_artifacts
    from pypto.runtime.compiled_program import CompiledProgram
    from pypto.runtime.config import new_build_dir
    if isinstance(distributed_config, dict):
        distributed_config = DistributedConfig(**distributed_config)
    host_in, chip_in, _subs = split_host(program)
    for p in host_in.params:
        if isinstance(p.type, DistributedTensorType):
            raise TypeCheckError(f"HOST orchestrator parameter '{p.name_hint}' cannot be a DistributedTensor",
                                 p.span, hint="allocate windows inside the host body with pld.alloc_window_buffer")
    out_dir = Path(output_dir) if output_dir is not None else \
        (new_build_dir(program.name) if dump_passes or save_kernels else None)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    from pypto.runtime.distributed_world_size import fold_world_size
    folded = fold_world_size(host_in, distributed_config.world_size)
    if folded is not host_in:                    # the host knows its world: static window shapes for the builtins
        program = program.with_functions([folded if f is host_in else f for f in program.functions.values()])
    lowered = lower(program, platform=platform, strategy=strategy, dump_passes=dump_passes, output_dir=out_dir)
    host, chip_lowered, sub_workers = split_host(lowered)
    chip = CompiledProgram(chip_in, chip_lowered, platform=platform, output_dir=out_dir)
    compiled = DistributedCompiledProgram(program, host, chip, distributed_config, platform, sub_workers)
    if out_dir is not None:
        write_artifacts(chip)
        write_host_artifacts(compiled, out_dir)
    return compiled


def builtin_variant_name(orch: Function) -> str:
    """The reference's name of a host-collective builtin: op, then its reduce op / root, then the data dtype."""
    op = orch.attrs["host_collective"].rsplit(".", 1)[1]
    params = list(orch.params)
    data = params[1] if op in ("allgather", "all_to_all", "all_to_all_v") and len(params) > 1 else \
        (params[0] if params else None)
    dtype = "fp32" if op == "barrier" or data is None else data.type.dtype.name.lower()
    parts = [f"builtin.tensor.{op}" + ("_ring" if orch.attrs.get("collective_mode") == "ring" else "")]
    if "collective_op" in orch.attrs:
        parts.append(orch.attrs["collective_op"].lower())
    if "collective_root" in orch.attrs:
        parts.append(f"root{orch.attrs['collective_root']}")
    return "__".join(parts + [dtype])


def write_host_artifacts(compiled: "DistributedCompiledProgram", out) -> None:
    """The host orchestrator's simulator code and the builtins' next_levels/ sub-builds, under `out`."""
    from pathlib import Path

    from pypto.runtime.compile import write_artifacts
    from pypto.runtime.compiled_program import CompiledProgram
    out = Path(out)
    code = compiled.host_code()
    path = out / "orchestration" / f"{compiled.host_function.name}.host_orch.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code.source)
    lowered = compiled.chip.lowered
    for orch in lowered.functions.values():
        if not orch.attrs.get("host_collective"):
            continue
        base = orch.name[:-len("_orch")] if orch.name.endswith("_orch") else orch.name
        members = [f for f in lowered.functions.values() if f.name == base or f.name.startswith(base + "_")]
        sub = Program(members, base)
        variant = out / "next_levels" / builtin_variant_name(orch)
        variant.mkdir(parents=True, exist_ok=True)
        write_artifacts(CompiledProgram(sub, sub, platform=compiled.platform, output_dir=variant))
