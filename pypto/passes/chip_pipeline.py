"""The chip pipeline: the passes that lower a chip program (kernels and the orchestration that
dispatches them) to allocated AIC / AIV kernels, one pass object per entry, a comment each on why
it sits there. The Default pipeline (`pypto.passes.manager`) is this plus the distributed host
path, whose LowerHostTensorCollectives builds each builtin chip program through this tuple.

    final = run_pipeline(CHIP_PIPELINE, program, until="InferTileMemorySpace")
"""

from pypto.passes.memory.allocate_memory_addr import allocate_memory_addr
from pypto.passes.auto_tile_matmul_l0 import auto_tile_matmul_l0
from pypto.passes.convert_tensor_to_tile_ops import convert_tensor_to_tile_ops
from pypto.passes.convert_to_ssa import convert_to_ssa
from pypto.passes.expand_mixed_kernel import expand_mixed_kernel
from pypto.passes.flatten_call_expr import flatten_call_expr
from pypto.passes.flatten_tile_nd_to_2d import flatten_tile_nd_to_2d
from pypto.passes.fuse_create_assemble_to_slice import fuse_create_assemble_to_slice
from pypto.passes.infer_tile_memory_space import infer_tile_memory_space
from pypto.passes.memory.init_mem_ref import init_mem_ref
from pypto.passes.inject_gm_pipe_buffer import inject_gm_pipe_buffer
from pypto.passes.inline_functions import inline_functions
from pypto.passes.lower_auto_vector_split import lower_auto_vector_split
from pypto.passes.lower_composite_ops import lower_composite_ops
from pypto.passes.memory.materialize_semantic_aliases import materialize_semantic_aliases
from pypto.passes.memory.memory_reuse import memory_reuse
from pypto.passes.normalize_stmt_structure import normalize_stmt_structure
from pypto.passes.optimize_orch_tensors import optimize_orch_tensors
from pypto.passes.outline_cluster_scopes import outline_cluster_scopes
from pypto.passes.outline_hierarchy_scopes import outline_hierarchy_scopes
from pypto.passes.outline_incore_scopes import outline_incore_scopes
from pypto.passes.simplify import simplify
from pypto.passes.split_vector_kernel import split_vector_kernel
from pypto.passes.stamp_tfree_split import stamp_tfree_split

# The chip pipeline: every pass a chip program (kernels + their orchestration) needs. Order matters.
CHIP_PIPELINE = (
    # Splice Inline functions first, so no later pass meets FunctionType.Inline or a call to one.
    inline_functions(),
    # The parser emits one Var per Python name; every analysis below assumes single definitions.
    convert_to_ssa(),
    # Fold constants (after SSA, where each name has one value) so tile shapes become static.
    simplify(),
    # Canonical statement nesting, which the rewriting passes below rely on.
    normalize_stmt_structure(),
    # Three-address form: outlining and conversion then see one call per statement.
    flatten_call_expr(),
    # Levels above the cores: a pl.at(level=CHIP / HOST / ...) scope becomes a function of that level and role
    # (a HOST orchestrator's inline chip work becomes the chip orchestration it dispatches).
    outline_hierarchy_scopes(),
    # Kernel boundaries: each pl.at scope becomes an InCore function, the parent the orchestration.
    outline_incore_scopes(),
    # Launch wrappers: pl.cluster → Group, standalone pl.spmd → Spmd (core_num / sync_start in attrs).
    outline_cluster_scopes(),
    # Kernels now exist: lower their tensor ops to tile ops with entry loads / exit stores.
    convert_tensor_to_tile_ops(),
    # Loop-carried kernel outputs reuse the carried buffer (Out folds into InOut); assemble loops store.
    optimize_orch_tensors(),
    # Composite tile ops (sin / cos / select / tquant_mx) → primitives, before any tile pass looks at them.
    lower_composite_ops(),
    # The vector ISA addresses tiles as rows x columns: rank > 2 tiles → 2-D; transpose gets its scratch.
    flatten_tile_nd_to_2d(),
    # Matmuls on whole Mat operands rarely fit L0: K loops of Mat → Left / Right extracts, M / N output blocks.
    auto_tile_matmul_l0(),
    # Every tile needs a memory space before cores are chosen and buffers planned.
    infer_tile_memory_space(),
    # pl.split_aiv regions → lane code (shard / gather boundaries, lane index), with placement checks.
    lower_auto_vector_split(),
    # Memory spaces decide the core: InCore kernels become AIV or AIC, mixed ones AIC + AIV + Group with pipes.
    expand_mixed_kernel(),
    # a2a3 rings live in GM: pipe kernels get a __gm_pipe_buffer Out param, the orchestration creates it.
    inject_gm_pipe_buffer(),
    # pl.split kernels: the AIV half runs on both lanes, each on its part; transfers carry split codes.
    split_vector_kernel(),
    # Each tfree takes the split code / pipe id of the tpop it frees.
    stamp_tfree_split(),
    # Buffers: one MemRef per tile, sharing where values must alias (stores, in-place ops, loop carries).
    init_mem_ref(),
    # Values that must be one buffer (in-place results, loop carries) share one MemRef, whoever built the IR.
    materialize_semantic_aliases(),
    # Tiles whose lifetimes do not overlap share an allocation: the peak per space drops before placement.
    memory_reuse(),
    # Place the allocations in each memory space and check the platform's capacity (the passes after it
    # work on orchestration and host functions, not on kernel buffers).
    allocate_memory_addr(),
    # A kernel output staged only to be assembled into a larger tensor is written into that window in place.
    fuse_create_assemble_to_slice(),
)
