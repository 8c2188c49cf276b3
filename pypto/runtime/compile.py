"""The compile driver behind `ir.compile`, `run` and `@pl.jit`: passes, artifacts, CompiledProgram.

    compiled = compile_program(Prog, platform="a2a3sim")              # no files written
    compiled = compile_program(Prog, dump_passes=True)                # build_output/<name>_<ts>/...

Directories are created at compile time only when dumping, profiling, saving kernels, or given an
output_dir (compile latency matters for @pl.jit); otherwise the first read of
`compiled.output_dir` writes one. The reference's other options are in compile_options.py. The output dir holds `passes_dump/` (when dumping), `ptoas/`
(one `.pto` per AIC / AIV kernel), `orchestration/` (the final IR as DSL text and, per Orchestration
function, `<fn>.sim.py`: the host code the simulator runs, from that file), `kernels/sim/`, `report/` and
`kernel_config.py` (pypto.runtime.artifacts); `CompiledProgram.from_dir` reloads it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from pypto.errors import TypeCheckError, UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.log_level import pypto_logger
from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.config import SIM_PLATFORMS, RunConfig, check_platform, dump_passes_forced, new_build_dir


def _as_program(program) -> Program:
    if isinstance(program, Program):
        return program
    if isinstance(program, Function):
        return Program([program], program.name)
    inner = getattr(program, "program", None)
    if isinstance(inner, Program):
        return inner
    raise TypeCheckError(f"compile expects an ir.Program (a @pl.program class), got {type(program).__name__}")


def lower(program: Program, *, platform: str = "a2a3sim", strategy=None, dump_passes=False,
          output_dir: Optional[Path] = None, verification_level=None, timing=None) -> Program:
    """Run the pass pipeline for `platform` and return the final IR (`timing`: a TimingInstrument to fill)."""
    from pypto.language import parse
    from pypto.passes import OptimizationStrategy, PassContext, PassManager
    strategy = strategy if strategy is not None else OptimizationStrategy.Default
    base = platform[:-3] if platform.endswith("sim") else platform
    instruments = [timing] if timing is not None else []
    with PassContext(instruments, verification_level=verification_level, platform=base,
                     parse=parse):                                # the parser serves the round-trip check
        manager = PassManager.get_strategy(strategy)
        return manager.run_passes(program, dump_ir=bool(dump_passes),
                                  output_dir=str(output_dir) if output_dir is not None else None)


def _platform_for(platform: Optional[str], backend_type) -> str:
    """`platform`, or the simulator of `backend_type` when only that is named; the two must agree."""
    from pypto.runtime.config import backend_type_of
    wanted = getattr(backend_type, "value", backend_type)
    if platform is None:
        platform = "a5sim" if wanted == "Ascend950" else "a2a3sim"
    platform = check_platform(platform)
    if wanted is not None and wanted != backend_type_of(platform):
        from pypto.errors import ValueCheckError
        raise ValueCheckError(f"compile(backend_type={wanted}) does not match platform '{platform}' "
                              f"({backend_type_of(platform)})", hint="name one of them, or make them agree")
    return platform


def compile_program(program, output_dir=None, dump_passes=False, platform: Optional[str] = None, *, strategy=None,
                    backend_type=None, save_kernels: bool = False, **options) -> CompiledProgram:
    """Compile `program` for `platform`; return a CompiledProgram (`.lowered` is the final IR)."""
    from pypto.runtime.compile_options import dump_flag, split_options
    options = split_options(options)
    program = _as_program(program)
    from pypto.runtime.output_writes import check_discarded_output_writes
    check_discarded_output_writes(program)
    platform = _platform_for(platform, backend_type)
    dump_passes = dump_flag(dump_passes) or dump_passes_forced()   # PYPTO_DUMP_PASSES=1 reaches ir.compile too
    profiling = options.get("profiling", False)
    if options.get("distributed_config") is not None:       # a HOST orchestrator + chip functions
        from pypto.runtime.distributed import compile_distributed
        return compile_distributed(program, options["distributed_config"], platform=platform, strategy=strategy,
                                   output_dir=output_dir, dump_passes=dump_passes, save_kernels=save_kernels)
    from pypto.runtime.distributed import is_host_orchestrator
    host = next((f for f in program.functions.values() if is_host_orchestrator(f)), None)
    if host is not None:
        raise UnsupportedError(f"program '{program.name}' has a HOST orchestrator ('{host.name}'), which runs on "
                               "a world of devices", host.span,
                               hint="pass distributed_config=DistributedConfig(device_ids=[0, 1, ...]) "
                                    "(from pypto.ir.distributed_compiled_program)")
    out_dir: Optional[Path] = None
    if output_dir is not None:
        out_dir = Path(output_dir)
    elif dump_passes or save_kernels or profiling:
        out_dir = new_build_dir(program.name)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    timing = None
    if profiling:
        from pypto.passes import TimingInstrument
        timing = TimingInstrument()
    log, start = pypto_logger("compile"), time.perf_counter()
    log.info("compiling %s for %s", program.name or "program", platform)
    lowered = lower(program, platform=platform, strategy=strategy, dump_passes=dump_passes, output_dir=out_dir,
                    verification_level=options.get("verification_level"), timing=timing)
    compiled = CompiledProgram(program, lowered, platform=platform, output_dir=out_dir)
    if out_dir is not None:
        write_artifacts(compiled)
    if timing is not None:
        write_pipeline_profile(out_dir, timing)
    log.info("compiled %s in %.1f ms%s", program.name or "program", (time.perf_counter() - start) * 1e3,
             f"; build directory {out_dir}" if out_dir is not None else "")
    return compiled


def write_pipeline_profile(out_dir: Path, timing) -> None:
    """report/pipeline_profile.txt (a table) and .json (the figures): seconds spent in each pass."""
    import json
    report = out_dir / "report"
    report.mkdir(parents=True, exist_ok=True)
    total = sum(sec for _name, sec in timing.timings)
    (report / "pipeline_profile.txt").write_text(
        "# seconds per pass (pass pipeline only)\n" + timing.report() + f"\n{'total':32s} {total * 1000:8.2f} ms\n")
    (report / "pipeline_profile.json").write_text(json.dumps(
        {"passes": [{"name": name, "seconds": sec} for name, sec in timing.timings], "total_seconds": total},
        indent=1) + "\n")


def compile_with_config(program, config: RunConfig) -> CompiledProgram:
    return compile_program(program, output_dir=config.save_kernels_dir, dump_passes=config.dump_passes,
                           platform=config.platform, strategy=config.strategy, save_kernels=config.save_kernels,
                           profiling=bool(config.compile_profiling))


def write_artifacts(compiled: CompiledProgram) -> None:
    """The reference's build layout (see pypto.runtime.artifacts)."""
    from pypto.runtime.artifacts import write_build_dir
    write_build_dir(compiled)
    if compiled.platform in SIM_PLATFORMS:
        _ = compiled.sim                       # generates and writes the simulator sources now


def memory_report(program: Program) -> str:
    """Bytes of each on-chip space each kernel allocates (from its tile.alloc statements)."""
    from pypto.runtime.sim.layout import find_allocs
    lines = ["# on-chip memory per kernel: space, allocations, bytes (highest end address)"]
    for f in program.functions.values():
        if f.func_type in (FunctionType.Orchestration, FunctionType.Opaque, FunctionType.Inline):
            continue
        per_space: dict = {}
        for alloc in find_allocs(f).values():
            n, end = per_space.get(alloc.space, (0, 0))
            top = (alloc.addr if alloc.addr is not None and alloc.addr >= 0 else 0) + alloc.size
            per_space[alloc.space] = (n + 1, max(end, top))
        lines.append(f"{f.name} ({f.func_type.name}):")
        for space, (n, end) in sorted(per_space.items(), key=lambda kv: kv[0].value):
            lines.append(f"  {space.name}: {n} allocation(s), top address {end}")
        lines += reuse_lines(f, {space: end for space, (_n, end) in per_space.items()})
    return "\n".join(lines) + "\n"


def reuse_lines(func: Function, after: dict) -> list:
    """Peak bytes per space before MemoryReuse (one buffer per value group) and after it (top address)."""
    from pypto.passes.memory.memory_reuse import peak_before_reuse
    before = peak_before_reuse(func)
    return [f"  {space.name} peak bytes: before reuse {before.get(space, 0)}, after reuse {after.get(space, 0)}"
            for space in sorted(set(before) | set(after), key=lambda s: s.value)]
