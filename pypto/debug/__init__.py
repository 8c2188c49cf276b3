"""Debugging tools for kernel authors: swimlane timelines, pass-by-pass numeric bisection, reference
programs generated from any stage's IR (numpy_codegen / torch_codegen), the IR trace viewer and the
memory map (each a module; the CLI wraps them as `pypto bisect`, `pypto trace-ir`, `pypto memory-map`)."""


def __getattr__(name):
    """The entry points, imported when first used (importing pypto.debug stays cheap)."""
    if name in ("numpy_codegen", "torch_codegen"):
        from pypto.debug import reference_codegen
        return getattr(reference_codegen, name)
    raise AttributeError(f"module 'pypto.debug' has no attribute '{name}'")
