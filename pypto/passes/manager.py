"""Pass and PassManager: a pass is a named Program → Program transform with a property contract;
the PassManager runs the Default pipeline (one tuple below, a comment per entry) and dumps the IR.

    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    final = pm.run_passes(program, dump_ir=True, output_dir="build")   # build/passes_dump/NN_after_X.py

Every pass call runs inside `PassContext.current()`, whose instruments (verification,
roundtrip, timing, dumps) wrap it.
"""

from __future__ import annotations

import enum
import importlib
import os
from typing import Callable, Optional

from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.function import Function, Program
from pypto.passes.context import PassContext
from pypto.passes.instruments import DumpInstrument
from pypto.passes.properties import PassProperties


class Pass:
    """A named program transform with required / produced / invalidated properties."""

    def __init__(self, name: str, transform: Callable[[Program], Program], properties: PassProperties = PassProperties()):
        self.name = name
        self.transform = transform
        self.properties = properties

    def __call__(self, program: Program) -> Program:
        instruments = PassContext.current().effective_instruments()
        for inst in instruments:
            inst.run_before_pass(self, program)
        result = self.transform(program)
        for inst in instruments:
            inst.run_after_pass(self, result)
        return result

    def get_name(self) -> str:
        return self.name

    def get_required_properties(self) -> frozenset:
        return self.properties.required

    def get_produced_properties(self) -> frozenset:
        return self.properties.produced

    def get_invalidated_properties(self) -> frozenset:
        return self.properties.invalidated

    def __repr__(self) -> str:
        return f"Pass({self.name})"


def function_pass(name: str, transform_function: Callable[[Function, Program], Function],
                  properties: PassProperties = PassProperties()) -> Pass:
    """A pass that rewrites each function on its own (`transform_function(func, program)`)."""

    def run(program: Program) -> Program:
        new = [transform_function(f, program) for f in program.functions.values()]
        if all(a is b for a, b in zip(new, program.functions.values())):
            return program
        return program.with_functions(new)

    return Pass(name, run, properties)


class OptimizationStrategy(enum.Enum):
    Default = "Default"


# The Default pipeline: (pass name, module / factory name in pypto.passes). Order matters.
DEFAULT_PIPELINE = (
    # Splice Inline functions first, so no later pass meets FunctionType.Inline or a call to one.
    ("InlineFunctions", "inline_functions"),
    # The parser emits one Var per Python name; every analysis below assumes single definitions.
    ("ConvertToSSA", "convert_to_ssa"),
    # Fold constants (after SSA, where each name has one value) so tile shapes become static.
    ("Simplify", "simplify"),
    # Canonical statement nesting, which the rewriting passes below rely on.
    ("NormalizeStmtStructure", "normalize_stmt_structure"),
    # Three-address form: outlining and conversion then see one call per statement.
    ("FlattenCallExpr", "flatten_call_expr"),
    # Kernel boundaries: each pl.at scope becomes an InCore function, the parent the orchestration.
    ("OutlineIncoreScopes", "outline_incore_scopes"),
    # Launch wrappers: pl.cluster → Group, standalone pl.spmd → Spmd (core_num / sync_start in attrs).
    ("OutlineClusterScopes", "outline_cluster_scopes"),
    # Kernels now exist: lower their tensor ops to tile ops with entry loads / exit stores.
    ("ConvertTensorToTileOps", "convert_tensor_to_tile_ops"),
    # Loop-carried kernel outputs reuse the carried buffer (Out folds into InOut); assemble loops store.
    ("OptimizeOrchTensors", "optimize_orch_tensors"),
    # Composite tile ops (sin / cos / select / tquant_mx) → primitives, before any tile pass looks at them.
    ("LowerCompositeOps", "lower_composite_ops"),
    # The vector ISA addresses tiles as rows x columns: rank > 2 tiles → 2-D; transpose gets its scratch.
    ("FlattenTileNdTo2D", "flatten_tile_nd_to_2d"),
    # Matmuls on whole Mat operands rarely fit L0: K loops of Mat → Left / Right extracts, M / N output blocks.
    ("AutoTileMatmulL0", "auto_tile_matmul_l0"),
    # Every tile needs a memory space before cores are chosen and buffers planned.
    ("InferTileMemorySpace", "infer_tile_memory_space"),
    # pl.split_aiv regions → lane code (shard / gather boundaries, lane index), with placement checks.
    ("LowerAutoVectorSplit", "lower_auto_vector_split"),
    # Memory spaces decide the core: InCore kernels become AIV or AIC, mixed ones AIC + AIV + Group with pipes.
    ("ExpandMixedKernel", "expand_mixed_kernel"),
    # a2a3 rings live in GM: pipe kernels get a __gm_pipe_buffer Out param, the orchestration creates it.
    ("InjectGMPipeBuffer", "inject_gm_pipe_buffer"),
    # pl.split kernels: the AIV half runs on both lanes, each on its part; transfers carry split codes.
    ("SplitVectorKernel", "split_vector_kernel"),
    # Each tfree takes the split code / pipe id of the tpop it frees.
    ("StampTfreeSplit", "stamp_tfree_split"),
    # Buffers: one MemRef per tile, sharing where values must alias (stores, in-place ops, loop carries).
    ("InitMemRef", "init_mem_ref"),
    # Values that must be one buffer (in-place results, loop carries) share one MemRef, whoever built the IR.
    ("MaterializeSemanticAliases", "materialize_semantic_aliases"),
    # Tiles whose lifetimes do not overlap share an allocation: the peak per space drops before placement.
    ("MemoryReuse", "memory_reuse"),
    # Place the allocations in each memory space and check the platform's capacity (the passes after it
    # work on orchestration and host functions, not on kernel buffers).
    ("AllocateMemoryAddr", "allocate_memory_addr"),
    # A kernel output staged only to be assembled into a larger tensor is written into that window in place.
    ("FuseCreateAssembleToSlice", "fuse_create_assemble_to_slice"),
    # Distributed host path (no-ops without a HOST orchestrator): a host allreduce without a signal gets its own
    # signal window, so every later stage sees the explicit two-window form.
    ("SynthesizeAllReduceSignals", "synthesize_all_reduce_signals"),
    # Window buffers → the comm domains of the ranks that use them (CommDomainScopeStmt), which the host
    # collectives below are dispatched over.
    ("MaterializeCommDomainScopes", "materialize_comm_domain_scopes"),
    # Host collectives → dispatches of builtin chip programs, each built by the chip passes above.
    ("LowerHostTensorCollectives", "lower_host_tensor_collectives"),
    # Kernels with window parameters get explicit CommCtx parameters (PTO codegen addresses peers through them).
    ("MaterializeDistTensorCtx", "materialize_dist_tensor_ctx"),
)

_STRATEGIES = {OptimizationStrategy.Default: DEFAULT_PIPELINE}


def make_pass(factory_name: str) -> Pass:
    module = importlib.import_module(f"pypto.passes.{factory_name}")
    return getattr(module, factory_name)()


class PassManager:
    """Runs a strategy's passes in order inside the current PassContext."""

    def __init__(self, strategy: OptimizationStrategy = OptimizationStrategy.Default):
        self.strategy = strategy
        self.passes = [make_pass(factory) for _name, factory in _STRATEGIES[strategy]]

    @classmethod
    def get_strategy(cls, strategy: OptimizationStrategy = OptimizationStrategy.Default) -> "PassManager":
        return cls(strategy)

    def pass_names(self) -> list:
        return [p.name for p in self.passes]

    def run_passes(self, program: Program, dump_ir: bool = False, output_dir: Optional[str] = None,
                   prefix: str = "pl") -> Program:
        if prefix != "pl":
            raise UnsupportedError(f"run_passes(prefix={prefix!r}): dumps are printed with the 'pl' prefix only")
        if not dump_ir:
            return self._run_all(program)
        if output_dir is None:
            raise ValueCheckError("run_passes(dump_ir=True) needs an output_dir to write passes_dump/ into",
                                  hint="pass output_dir=... or dump_ir=False")
        outer = PassContext.current()
        dump = DumpInstrument(os.path.join(output_dir, "passes_dump"))
        dump.dump("00_frontend.py", program)
        with PassContext((*outer.instruments, dump), verification_level=outer._verification_level,
                         platform=outer.platform):
            return self._run_all(program)

    def _run_all(self, program: Program) -> Program:
        """Run every pass; verification instruments remember what they verified for the whole run."""
        instruments = [i for i in PassContext.current().effective_instruments() if hasattr(i, "begin_pipeline")]
        for inst in instruments:
            inst.begin_pipeline()
        try:
            for p in self.passes:
                program = p(program)
        finally:
            for inst in instruments:
                inst.end_pipeline()
        return program
