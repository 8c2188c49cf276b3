"""Code generation from the final IR: `.pto` kernels (pypto.codegen.pto), the host orchestration
artifact (pypto.codegen.orchestration) and the kernel_config listing (pypto.codegen.kernel_config)."""


def __getattr__(name):
    """`codegen.PTOCodegen` (the reference's spelling) without importing the emitters up front."""
    if name == "PTOCodegen":
        from pypto.codegen.pto import PTOCodegen
        return PTOCodegen
    raise AttributeError(f"module 'pypto.codegen' has no attribute {name!r}")
