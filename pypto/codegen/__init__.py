"""Code generation from the final IR: `.pto` kernels (pypto.codegen.pto) and the kernel_config listing
(pypto.codegen.kernel_config). Orchestration functions become the simulator's host code
(pypto.runtime.sim.codegen), which is also the build directory's orchestration artifact."""


def __getattr__(name):
    """`codegen.PTOCodegen` (the reference's spelling) without importing the emitters up front."""
    if name == "PTOCodegen":
        from pypto.codegen.pto import PTOCodegen
        return PTOCodegen
    raise AttributeError(f"module 'pypto.codegen' has no attribute {name!r}")
