"""The build directory of a compiled program, laid out like the reference's `build_output/<name>_<ts>/`:

    passes_dump/             00_frontend.py, NN_after_<Pass>.py   (when dumping passes)
    ptoas/<kernel>.pto       one PTO-dialect module per AIC / AIV kernel
    orchestration/<Prog>.py  the final IR as DSL text (what from_dir re-parses)
    orchestration/<fn>.sim.py, kernels/sim/<kernel>.py   the simulator's generated code: what runs, from
                             these files (sim platforms)
    orchestration/<fn>.host.py   the orchestration as a listing in the reference runtime's vocabulary
                             (pypto.codegen.orchestration; `rt.submit_aiv_task(...)`)
    orchestration/<host>.host_orch.py   a distributed program's HOST orchestrator, the code that runs
    report/memory.txt        on-chip memory per kernel;  report/frontend_ir.py  the program as given
    report/codegen.txt       kernels whose `.pto` could not be generated, and why
    kernel_config.py         the manifest (pypto.codegen.kernel_config)

    write_build_dir(compiled)               # after compile
    compiled = load_build_dir(path)         # CompiledProgram.from_dir
"""

from __future__ import annotations

from pathlib import Path

from pypto.errors import PyptoError, ValueCheckError
from pypto.codegen.kernel_config import kernel_config, read_kernel_config, write_kernel_config

KERNEL_CONFIG = "kernel_config.py"


def write_build_dir(compiled) -> None:
    from pypto.codegen.orchestration import generate_all
    from pypto.codegen.pto import arch_of, generate_function, is_kernel
    from pypto.ir.printer import python_print
    from pypto.runtime.compile import memory_report
    from pypto.runtime.config import DEVICE_PLATFORMS

    out = Path(compiled.output_dir)
    lowered = compiled.lowered
    for sub in ("orchestration", "report", "ptoas"):
        (out / sub).mkdir(parents=True, exist_ok=True)
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
            if compiled.platform in DEVICE_PLATFORMS:
                raise                             # a device build without its kernel is no build
            failures.append(f"{f.name}: {e}")
            continue
        rel = f"ptoas/{f.name}.pto"
        (out / rel).write_text(text)
        pto_sources[f.name] = rel
    (out / "report" / "codegen.txt").write_text(
        "# kernels without a .pto (the simulator still runs them)\n" + "".join(x + "\n" for x in failures))

    orch_sources = {}
    for name, text in generate_all(lowered).items():
        rel = f"orchestration/{name}.host.py"
        (out / rel).write_text(text)
        orch_sources[name] = rel
    config = kernel_config(lowered, platform=compiled.platform, backend_type=compiled.backend_type,
                           final_ir=final_ir, frontend_ir="report/frontend_ir.py", pto_sources=pto_sources,
                           orchestration_sources=orch_sources)
    write_kernel_config(out / KERNEL_CONFIG, config)


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
