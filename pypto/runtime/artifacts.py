"""The build directory of a compiled program, laid out like the reference's `build_output/<name>_<ts>/`:

    passes_dump/             00_frontend.py, NN_after_<Pass>.py   (when dumping passes)
    ptoas/<kernel>.pto       one PTO-dialect module per AIC / AIV kernel
    orchestration/<Prog>.py  the final IR as DSL text (what from_dir re-parses)
    orchestration/<fn>.sim.py   each Orchestration function as the host code the simulator runs: it is
                             generated, written, and executed from this file (the one orchestration
                             artifact; its header lists the tasks it submits, core types and directions)
    kernels/sim/<kernel>.py  the simulator's code of each kernel, likewise run from the file (sim platforms)
    orchestration/<host>.host_orch.py   a distributed program's HOST orchestrator, the code that runs
    report/memory.txt        on-chip memory per kernel;  report/frontend_ir.py  the program as given
    report/codegen.txt       kernels whose `.pto` could not be generated, and why
    kernel_config.py         the manifest (pypto.codegen.kernel_config); its orchestration sources are
                             the `.sim.py` files
    debug/run.py             reloads this directory and runs it on the simulator (pypto.runtime.build_harness)
    report/pipeline_profile.{txt,json}   seconds per pass, when compiled with profiling=True

    write_build_dir(compiled)               # after compile
    compiled = load_build_dir(path)         # CompiledProgram.from_dir
"""

from __future__ import annotations

from pathlib import Path

from pypto.errors import PyptoError, ValueCheckError
from pypto.ir.enums import FunctionType
from pypto.codegen.kernel_config import kernel_config, read_kernel_config, write_kernel_config

KERNEL_CONFIG = "kernel_config.py"


def write_build_dir(compiled) -> None:
    from pypto.codegen.pto import arch_of, generate_function, is_kernel
    from pypto.ir.printer import python_print
    from pypto.runtime.compile import memory_report
    from pypto.runtime.config import DEVICE_PLATFORMS
    from pypto.runtime.sim.program import orchestration_code, sim_source_path

    out = Path(compiled.output_dir)
    lowered = compiled.lowered
    for sub in ("orchestration", "report", "ptoas", "kernels", "debug"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    from pypto.runtime.build_harness import RUN_PY
    (out / "debug" / "run.py").write_text(RUN_PY)
    final_ir = f"orchestration/{lowered.name or 'program'}.py"
    (out / final_ir).write_text(python_print(lowered))
    (out / "report" / "frontend_ir.py").write_text(python_print(compiled.program))
    (out / "report" / "memory.txt").write_text(memory_report(lowered))

    pto_sources, failures = {}, []
    for f in lowered.functions.values():
        if not is_kernel(f):
            continue
        try:
            text = generate_function(f, arch=arch_of(compiled.platform))
        except PyptoError as e:
            if compiled.platform in DEVICE_PLATFORMS:    # a device build without its kernel is no build
                from pypto.backend.pto_backend import PartialCodegenError
                raise PartialCodegenError(f"no .pto for kernel '{f.name}': {e.message}", e.span, hint=e.hint,
                                          files={rel: (out / rel).read_text() for rel in pto_sources.values()}
                                          ) from e
            failures.append(f"{f.name}: {e}")
            continue
        rel = f"ptoas/{f.name}.pto"
        (out / rel).write_text(text)
        pto_sources[f.name] = rel
    (out / "report" / "codegen.txt").write_text(
        "# kernels without a .pto (the simulator still runs them)\n" + "".join(x + "\n" for x in failures))

    # the manifest names the orchestration code that runs; on a sim platform compiling `compiled.sim`
    # (write_artifacts) writes it, a device build writes the orchestration code alone
    if compiled.platform in DEVICE_PLATFORMS:
        orchestration_code(lowered, out)
        (out / "kernels" / "README.txt").write_text(
            "No device binaries: this pure-Python build has no ptoas / CANN. The kernels' .pto modules are in "
            "ptoas/.\n")
    orch_sources = {f.name: sim_source_path("orchestration", f.name) for f in lowered.functions.values()
                    if f.func_type is FunctionType.Orchestration}
    config = kernel_config(lowered, platform=compiled.platform, backend_type=compiled.backend_type,
                           final_ir=final_ir, frontend_ir="report/frontend_ir.py", pto_sources=pto_sources,
                           orchestration_sources=orch_sources)
    write_kernel_config(out / KERNEL_CONFIG, config)


def materialize_build_dir(compiled, out=None) -> None:
    """Write the build directory of a program compiled without one (the first read of `output_dir`), at
    `out` or a new timestamped folder."""
    from pypto.runtime.config import SIM_PLATFORMS, new_build_dir
    from pypto.runtime.sim.program import sim_source_path
    from pypto.runtime.sim.codegen import HOST_TYPES
    out = Path(out) if out is not None else new_build_dir(compiled.lowered.name)
    out.mkdir(parents=True, exist_ok=True)
    compiled._shared["build_dir"] = out
    write_build_dir(compiled)
    if compiled.platform not in SIM_PLATFORMS:
        return
    sim = compiled._shared["sim"]
    if sim is None:
        _ = compiled.sim                          # generated from files in the build directory
        return
    for code in sim.functions.values():           # already generated in memory: write the same sources
        kind = "orchestration" if code.func.func_type in HOST_TYPES else "kernels"
        path = out / sim_source_path(kind, code.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code.source)


def load_build_dir(path, *, entry=None):
    """Rebuild a CompiledProgram from its build directory by re-parsing the final IR it wrote."""
    from pypto.language import parse
    from pypto.runtime.compiled_program import CompiledProgram

    root = Path(path)
    config = read_kernel_config(root / KERNEL_CONFIG)
    meta = config.get("PYPTO")
    if not meta:
        raise ValueCheckError(f"{root / KERNEL_CONFIG} has no PYPTO section; it was not written by this pypto")
    final = root / meta["final_ir"]
    if not final.is_file():
        raise ValueCheckError(f"{final} is missing from the build directory")
    lowered = parse(final.read_text(), str(final))
    front = root / meta.get("frontend_ir", "")
    program = parse(front.read_text(), str(front)) if front.is_file() and front.suffix == ".py" else lowered
    return CompiledProgram(program, lowered, platform=meta["platform"], output_dir=root, entry=entry)
