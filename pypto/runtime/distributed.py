"""Distributed (multi-rank) programs: DistributedConfig, DistributedCompiledProgram, the host orchestrator.

A distributed program has one HOST-level orchestrator (`@pl.function(level=pl.Level.HOST,
role=pl.Role.Orchestrator)` or `@pl.jit.host`) and chip functions it dispatches with
`device=r`. `ir.compile(Prog, platform=..., distributed_config=DistributedConfig(device_ids=[0, 1]))`
compiles the chip functions through the Default pipeline (once: every rank runs the same
code) and keeps the host orchestrator as IR. Calling the result with host numpy arrays runs
the host orchestrator on the simulator's World: `pld.alloc_window_buffer` makes a symmetric
zeroed window per rank, `pld.window` views it, `x[r]` picks rank r's shard of a stacked
host array, and each `self.chip(..., device=r)` becomes a dispatch on rank r. All ranks then
run together under one scheduler (pypto.runtime.sim.world); Out / InOut host arrays are
written back only when every rank finished.

    compiled = ir.compile(Prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1]))
    compiled(x, y)                                    # x, y: [NR, ...] stacked host arrays
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.enums import Level, Role
from pypto.ir.expr import BinaryExpr, Call, ConstBool, ConstFloat, ConstInt, GlobalVar, MakeTuple, UnaryExpr, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (AssignStmt, CommDomainScopeStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts,
                           YieldStmt)
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


def split_host(program: Program):
    """(host orchestrator, chip-only program)."""
    hosts = [f for f in program.functions.values() if is_host_orchestrator(f)]
    if len(hosts) != 1:
        raise TypeCheckError(f"a distributed program needs exactly one HOST orchestrator, found {len(hosts)}",
                             hint="mark it @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)")
    chip = Program([f for f in program.functions.values() if f is not hosts[0]], program.name)
    return hosts[0], chip


_BIN = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
        "floormod": operator.mod, "truediv": operator.truediv, "eq": operator.eq, "ne": operator.ne,
        "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "min": min, "max": max,
        "and": lambda a, b: a and b, "or": lambda a, b: a or b}


@dataclass(eq=False)
class WindowBinding:
    """`pld.window(buf, shape, dtype=...)` on the host: resolved to rank r's view at dispatch time."""
    buffer: object
    shape: tuple
    dtype: object


class HostInterpreter:
    """Walk the HOST orchestrator's IR once per call, collecting each rank's dispatches in order."""

    def __init__(self, func: Function, world, chip_sim):
        self.func = func
        self.world = world
        self.sim = chip_sim
        self.env: dict = {}
        self.dispatches: dict = {r: [] for r in range(world.nranks)}

    def run(self, args: list) -> dict:
        for p, a in zip(self.func.params, args):
            self.env[p] = a
        self.stmt(self.func.body)
        return self.dispatches

    # ------------------------------------------------------------------ statements
    def stmt(self, s) -> None:
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                self.stmt(x)
        elif isinstance(s, AssignStmt):
            self.env[s.var] = self.expr(s.value)
        elif isinstance(s, EvalStmt):
            self.expr(s.expr)
        elif isinstance(s, ForStmt):
            carried = [self.expr(ia.init_value) for ia in s.iter_args]
            for i in range(int(self.expr(s.start)), int(self.expr(s.stop)), int(self.expr(s.step))):
                self.env[s.loop_var] = i
                for ia, v in zip(s.iter_args, carried):
                    self.env[ia] = v
                carried = self._body(s.body)
            for rv, v in zip(s.return_vars, carried):
                self.env[rv] = v
        elif isinstance(s, IfStmt):
            body = s.then_body if self.expr(s.condition) else s.else_body
            values = self._body(body) if body is not None else []
            for rv, v in zip(s.return_vars, values):
                self.env[rv] = v
        elif isinstance(s, CommDomainScopeStmt):     # windows are allocated per world; the scope numbers members
            if s.devices is not None:
                for b in s.buffers:
                    window = self.expr(b)
                    bad = [d for d in s.devices if not 0 <= int(d) < self.world.nranks]
                    if bad:
                        raise TypeCheckError(f"comm domain '{s.name_hint}': devices {bad} are outside the world of "
                                             f"{self.world.nranks} ranks", s.span)
                    window.members = [int(d) for d in s.devices]
            self.stmt(s.body)
        elif isinstance(s, (ReturnStmt, YieldStmt)):
            pass
        else:
            raise UnsupportedError(f"{type(s).__name__} in a HOST orchestrator", s.span)

    def _body(self, body) -> list:
        stmts = body.stmts if isinstance(body, SeqStmts) else [body]
        values: list = []
        for x in stmts:
            if isinstance(x, YieldStmt):
                values = [self.expr(v) for v in x.values]
            else:
                self.stmt(x)
        return values

    # ------------------------------------------------------------------ expressions
    def expr(self, e):
        if isinstance(e, Var):
            if e not in self.env:
                raise UnsupportedError(f"host value '{e.name_hint}' is not bound", e.span)
            return self.env[e]
        if isinstance(e, (ConstInt, ConstFloat, ConstBool)):
            return e.value
        if isinstance(e, MakeTuple):
            return tuple(self.expr(x) for x in e.elements)
        if isinstance(e, BinaryExpr):
            fn = _BIN.get(e.op)
            if fn is None:
                raise UnsupportedError(f"scalar operator '{e.op}' in a HOST orchestrator", e.span)
            return fn(self.expr(e.lhs), self.expr(e.rhs))
        if isinstance(e, UnaryExpr) and e.op == "neg":
            return -self.expr(e.operand)
        if isinstance(e, Call):
            return self.call(e)
        raise UnsupportedError(f"{type(e).__name__} in a HOST orchestrator", e.span)

    def call(self, c: Call):
        if isinstance(c.op, GlobalVar):
            return self.dispatch(c)
        name = c.op.name
        if name == "pld.world_size":
            return self.world.nranks
        if name == "pld.alloc_window_buffer":
            size = self.expr(c.args[0])
            dtype = c.kwargs.get("dtype")
            if isinstance(size, tuple):
                if dtype is None:
                    raise TypeCheckError("pld.alloc_window_buffer(shape) needs dtype=", c.span)
                nbytes = int(np.prod(size)) * np.dtype(dtype.to_numpy()).itemsize
            else:
                nbytes = int(size)
            return self.world.alloc_window(nbytes)
        if name == "pld.window":
            t = c.type
            return WindowBinding(self.expr(c.args[0]), tuple(int(self.expr(d)) for d in t.shape), t.dtype.to_numpy())
        if name == "pld.stacked_index":
            arr, r = self.expr(c.args[0]), int(self.expr(c.args[1]))
            if not 0 <= r < arr.shape[0]:
                raise TypeCheckError(f"x[{r}]: the stacked host tensor has {arr.shape[0]} shards", c.span)
            return arr[r]
        if name.startswith("pld.tensor."):
            raise UnsupportedError(f"host-level {name} reached the host interpreter unlowered", c.span,
                                   hint="compile the program with ir.compile(..., distributed_config=...): "
                                        "LowerHostTensorCollectives turns it into builtin chip dispatches")
        raise UnsupportedError(f"op {name} in a HOST orchestrator", c.span,
                               hint="a host orchestrator allocates windows and dispatches chip functions with device=r")

    def dispatch(self, c: Call):
        device = c.attrs.get("device") if c.attrs else None
        if device is None:
            raise UnsupportedError(f"calling '{c.op.name}' from the HOST orchestrator without device=r", c.span)
        rank = int(self.expr(device))
        if not 0 <= rank < self.world.nranks:
            raise TypeCheckError(f"device={rank} is outside the world of {self.world.nranks} ranks", c.span)
        code = self.sim.functions.get(c.op.name)
        if code is None or code.func.func_type.name != "Orchestration":
            raise UnsupportedError(f"the host dispatches '{c.op.name}', which is not a chip Orchestration function",
                                   c.span, hint="dispatch a @pl.jit / Orchestration function that calls the kernels")
        args = []
        for a in c.args:
            v = self.expr(a)
            if isinstance(v, WindowBinding):
                v = v.buffer.view(rank, v.shape, v.dtype)
            args.append(v)
        self.dispatches[rank].append((code, args))
        return None


class DistributedCompiledProgram:
    """A compiled distributed program: call it with the HOST orchestrator's host arrays (in place)."""

    def __init__(self, program: Program, host: Function, chip, config: DistributedConfig, platform: str):
        self.program = program
        self.host_function = host
        self.chip = chip                          # the CompiledProgram of the chip functions
        self.distributed_config = config
        self.platform = platform
        self.param_names = [p.name_hint for p in host.params]
        self.last_windows: list = []              # the World's window buffers of the last call (for tests)

    @property
    def output_dir(self):
        return self.chip.output_dir

    @property
    def lowered(self):
        return self.chip.lowered

    def __call__(self, *args, config=None):
        from pypto.runtime.compiled_program import _default_config
        from pypto.runtime.config import require_simulator
        from pypto.runtime.sim.host_args import HostArgs, plan_params
        from pypto.runtime.sim.world import World, WorldRun
        config = config or _default_config()
        require_simulator(self.platform)
        if len(args) != len(self.param_names):
            raise TypeCheckError(f"'{self.host_function.name}' takes {len(self.param_names)} arguments "
                                 f"({', '.join(self.param_names)}), got {len(args)}")
        host = HostArgs(plan_params(self.host_function), list(args), return_style=False, strict=config.sim_strict)
        world = World(self.distributed_config.world_size)
        sim = self.chip._sim_for(config)
        dispatches = HostInterpreter(self.host_function, world, sim).run(host.sim_args)
        with np.errstate(all="ignore"):
            WorldRun(world, sim, schedule=config.sim_schedule, seed=config.sim_seed,
                     window=config.sim_task_window).execute(dispatches)
        self.last_windows = world.windows
        host.write_back()
        return None

    def __repr__(self) -> str:
        return f"DistributedCompiledProgram({self.program.name!r}, platform={self.platform!r}, " \
               f"ranks={self.distributed_config.world_size})"


def compile_distributed(program: Program, distributed_config: DistributedConfig, *, platform: str, strategy=None,
                        output_dir=None, dump_passes=False, save_kernels: bool = False):
    """Run the whole program (HOST orchestrator included) through the Default pipeline, then split it.

    The pipeline's distributed passes (SynthesizeAllReduceSignals, MaterializeCommDomainScopes,
    LowerHostTensorCollectives) shape the host orchestrator and add the builtin chip programs; the
    chip functions become a CompiledProgram, the host orchestrator stays IR for the HostInterpreter.
    """
    from pathlib import Path

    from pypto.runtime.compile import lower, write_artifacts
    from pypto.runtime.compiled_program import CompiledProgram
    from pypto.runtime.config import new_build_dir
    if isinstance(distributed_config, dict):
        distributed_config = DistributedConfig(**distributed_config)
    host_in, chip_in = split_host(program)
    for p in host_in.params:
        if isinstance(p.type, DistributedTensorType):
            raise TypeCheckError(f"HOST orchestrator parameter '{p.name_hint}' cannot be a DistributedTensor",
                                 p.span, hint="allocate windows inside the host body with pld.alloc_window_buffer")
    out_dir = Path(output_dir) if output_dir is not None else \
        (new_build_dir(program.name) if dump_passes or save_kernels else None)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    lowered = lower(program, platform=platform, strategy=strategy, dump_passes=dump_passes, output_dir=out_dir)
    host, chip_lowered = split_host(lowered)
    chip = CompiledProgram(chip_in, chip_lowered, platform=platform, output_dir=out_dir)
    if out_dir is not None:
        write_artifacts(chip)
        from pypto.ir.printer import python_print     # the host orchestrator as final IR text (host_orch)
        (out_dir / "orchestration" / f"{host.name}.host_orch.py").write_text(python_print(host))
    return DistributedCompiledProgram(program, host, chip, distributed_config, platform)
