"""`from pypto.pypto_core import passes` (the reference's import path): the pass factories and the pass
infrastructure of `pypto.passes`, plus the verifier's `verify_property` / `Diagnostic`, resolved on use.

    program = passes.convert_to_ssa()(program)
    with passes.PassContext([passes.VerificationInstrument(passes.VerificationMode.AFTER)]):
        ...
"""

from pypto.lazy_exports import lazy_exports

_FROM_PASSES = (
    "PassContext",
    "VerificationLevel",
    "CallbackInstrument",
    "DumpInstrument",
    "Instrument",
    "RoundtripInstrument",
    "TimingInstrument",
    "VerificationInstrument",
    "VerificationMode",
    "make_roundtrip_instrument",
    "OptimizationStrategy",
    "Pass",
    "PassManager",
    "IRProperty",
    "IRPropertySet",
    "PassProperties",
    "verify_properties",
    "PassSelection",
    "DEFAULT_PIPELINE",
    "function_pass",
)
# pass factory → the module (or package) defining it
_FACTORIES = {
    "allocate_memory_addr": "pypto.passes.memory.allocate_memory_addr",
    "auto_tile_matmul_l0": "pypto.passes.auto_tile_matmul_l0",
    "convert_tensor_to_tile_ops": "pypto.passes.convert_tensor_to_tile_ops",
    "convert_to_ssa": "pypto.passes.convert_to_ssa",
    "expand_mixed_kernel": "pypto.passes.expand_mixed_kernel",
    "flatten_call_expr": "pypto.passes.flatten_call_expr",
    "flatten_tile_nd_to_2d": "pypto.passes.flatten_tile_nd_to_2d",
    "fuse_create_assemble_to_slice": "pypto.passes.fuse_create_assemble_to_slice",
    "infer_tile_memory_space": "pypto.passes.infer_tile_memory_space",
    "init_mem_ref": "pypto.passes.memory.init_mem_ref",
    "inject_gm_pipe_buffer": "pypto.passes.inject_gm_pipe_buffer",
    "inline_functions": "pypto.passes.inline_functions",
    "lower_auto_vector_split": "pypto.passes.lower_auto_vector_split",
    "lower_composite_ops": "pypto.passes.lower_composite_ops",
    "lower_host_tensor_collectives": "pypto.passes.lower_host_tensor_collectives",
    "materialize_comm_domain_scopes": "pypto.passes.materialize_comm_domain_scopes",
    "materialize_dist_tensor_ctx": "pypto.passes.materialize_dist_tensor_ctx",
    "materialize_semantic_aliases": "pypto.passes.memory.materialize_semantic_aliases",
    "memory_reuse": "pypto.passes.memory.memory_reuse",
    "normalize_stmt_structure": "pypto.passes.normalize_stmt_structure",
    "optimize_orch_tensors": "pypto.passes.optimize_orch_tensors",
    "outline_cluster_scopes": "pypto.passes.outline_cluster_scopes",
    "outline_hierarchy_scopes": "pypto.passes.outline_hierarchy_scopes",
    "outline_incore_scopes": "pypto.passes.outline_incore_scopes",
    "simplify": "pypto.passes.simplify",
    "split_vector_kernel": "pypto.passes.split_vector_kernel",
    "stamp_tfree_split": "pypto.passes.stamp_tfree_split",
    "synthesize_all_reduce_signals": "pypto.passes.synthesize_all_reduce_signals",
    "run_verifier": "pypto.passes.factories",
    "unroll_loops": "pypto.passes.factories",
}
__getattr__, __dir__ = lazy_exports(__name__, {**_FACTORIES, **{name: "pypto.passes" for name in _FROM_PASSES},
                                               "Diagnostic": "pypto.ir.verifier",
                                               "verify_property": "pypto.ir.verifier"})
