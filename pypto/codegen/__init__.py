"""Code generation from the final IR: `.pto` kernels (pypto.codegen.pto), the host orchestration
artifact (pypto.codegen.orchestration) and the kernel_config listing (pypto.codegen.kernel_config)."""
