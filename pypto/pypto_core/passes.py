"""`from pypto.pypto_core import passes`: the pass factories and the pass infrastructure (re-exports).

    program = passes.convert_to_ssa()(program)
    with passes.PassContext([passes.VerificationInstrument(passes.VerificationMode.AFTER)]):
        ...
"""

from pypto.ir.verifier import Diagnostic, verify_property  # noqa: F401
from pypto.passes.allocate_memory_addr import allocate_memory_addr  # noqa: F401
from pypto.passes.auto_tile_matmul_l0 import auto_tile_matmul_l0  # noqa: F401
from pypto.passes.context import PassContext, VerificationLevel  # noqa: F401
from pypto.passes.convert_tensor_to_tile_ops import convert_tensor_to_tile_ops  # noqa: F401
from pypto.passes.convert_to_ssa import convert_to_ssa  # noqa: F401
from pypto.passes.expand_mixed_kernel import expand_mixed_kernel  # noqa: F401
from pypto.passes.flatten_call_expr import flatten_call_expr  # noqa: F401
from pypto.passes.flatten_tile_nd_to_2d import flatten_tile_nd_to_2d  # noqa: F401
from pypto.passes.fuse_create_assemble_to_slice import fuse_create_assemble_to_slice  # noqa: F401
from pypto.passes.infer_tile_memory_space import infer_tile_memory_space  # noqa: F401
from pypto.passes.inject_gm_pipe_buffer import inject_gm_pipe_buffer  # noqa: F401
from pypto.passes.init_mem_ref import init_mem_ref  # noqa: F401
from pypto.passes.optimize_orch_tensors import optimize_orch_tensors  # noqa: F401
from pypto.passes.inline_functions import inline_functions  # noqa: F401
from pypto.passes.lower_composite_ops import lower_composite_ops  # noqa: F401
from pypto.passes.lower_auto_vector_split import lower_auto_vector_split  # noqa: F401
from pypto.passes.lower_host_tensor_collectives import lower_host_tensor_collectives  # noqa: F401
from pypto.passes.instruments import (CallbackInstrument, DumpInstrument, Instrument, RoundtripInstrument,  # noqa: F401
                                      TimingInstrument, VerificationInstrument, VerificationMode,
                                      make_roundtrip_instrument)
from pypto.passes.manager import OptimizationStrategy, Pass, PassManager  # noqa: F401
from pypto.passes.materialize_comm_domain_scopes import materialize_comm_domain_scopes  # noqa: F401
from pypto.passes.materialize_dist_tensor_ctx import materialize_dist_tensor_ctx  # noqa: F401
from pypto.passes.materialize_semantic_aliases import materialize_semantic_aliases  # noqa: F401
from pypto.passes.memory_reuse import memory_reuse  # noqa: F401
from pypto.passes.normalize_stmt_structure import normalize_stmt_structure  # noqa: F401
from pypto.passes.outline_cluster_scopes import outline_cluster_scopes  # noqa: F401
from pypto.passes.outline_incore_scopes import outline_incore_scopes  # noqa: F401
from pypto.passes.properties import IRProperty, IRPropertySet, PassProperties  # noqa: F401
from pypto.passes.simplify import simplify  # noqa: F401
from pypto.passes.split_vector_kernel import split_vector_kernel  # noqa: F401
from pypto.passes.stamp_tfree_split import stamp_tfree_split  # noqa: F401
from pypto.passes.synthesize_all_reduce_signals import synthesize_all_reduce_signals  # noqa: F401


def verify_properties(properties, program, where: str = "verify_properties") -> None:
    """Raise InternalError if one of `properties` does not hold for `program`."""
    from pypto.passes.instruments import _check
    _check(properties, program, where)
