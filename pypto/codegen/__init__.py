"""Code generation from the final IR: `.pto` kernels (pypto.codegen.pto) and the kernel_config listing
(pypto.codegen.kernel_config). Orchestration functions become the simulator's host code
(pypto.runtime.sim.codegen), which is also the build directory's orchestration artifact."""
