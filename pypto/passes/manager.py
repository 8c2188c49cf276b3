"""PassManager: runs the Default pipeline — the chip pipeline (`pypto.passes.chip_pipeline`), then
the distributed host path below — a tuple of pass objects, each carrying its own name.

    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    final = pm.run_passes(program, dump_ir=True, output_dir="build")   # build/passes_dump/NN_after_X.py
    tiles = pm.run(program, until="InferTileMemorySpace", skip={"AutoTileMatmulL0"})

Every pass call runs inside `PassContext.current()`, whose instruments (verification,
roundtrip, timing, dumps) wrap it.
"""

from __future__ import annotations

import enum
import os
from typing import Iterable, Optional

from pypto.errors import UnsupportedError, ValueCheckError
from pypto.ir.function import Program
from pypto.passes.base import Pass, function_pass, run_pipeline  # noqa: F401  (Pass's old import path)
from pypto.passes.chip_pipeline import CHIP_PIPELINE
from pypto.passes.context import PassContext
from pypto.passes.instruments import DumpInstrument
from pypto.passes.lower_host_tensor_collectives import lower_host_tensor_collectives
from pypto.passes.materialize_comm_domain_scopes import materialize_comm_domain_scopes
from pypto.passes.materialize_dist_tensor_ctx import materialize_dist_tensor_ctx
from pypto.passes.synthesize_all_reduce_signals import synthesize_all_reduce_signals


class OptimizationStrategy(enum.Enum):
    Default = "Default"


# The Default pipeline: the chip pipeline, then the distributed host path.
DEFAULT_PIPELINE = (
    *CHIP_PIPELINE,
    # Distributed host path (no-ops without a HOST orchestrator): a host allreduce without a signal gets its own
    # signal window, so every later stage sees the explicit two-window form.
    synthesize_all_reduce_signals(),
    # Window buffers → the comm domains of the ranks that use them (CommDomainScopeStmt), which the host
    # collectives below are dispatched over.
    materialize_comm_domain_scopes(),
    # Host collectives → dispatches of builtin chip programs, each built by the chip passes above.
    lower_host_tensor_collectives(),
    # Kernels with window parameters get explicit CommCtx parameters (PTO codegen addresses peers through them).
    materialize_dist_tensor_ctx(),
)


_STRATEGIES = {OptimizationStrategy.Default: DEFAULT_PIPELINE}


class PassManager:
    """Runs a strategy's passes in order inside the current PassContext."""

    def __init__(self, strategy: OptimizationStrategy = OptimizationStrategy.Default):
        self.strategy = strategy
        self.passes: tuple = _STRATEGIES[strategy]

    @classmethod
    def get_strategy(cls, strategy: OptimizationStrategy = OptimizationStrategy.Default) -> "PassManager":
        return cls(strategy)

    def pass_names(self) -> list:
        return [p.name for p in self.passes]

    def run(self, program: Program, *, until: Optional[str] = None, after: Optional[str] = None,
            skip: Iterable[str] = ()) -> Program:
        """The passes from the one after `after` through `until`, without those in `skip` (names)."""
        return run_pipeline(self.passes, program, until=until, after=after, skip=skip)

    def run_passes(self, program: Program, dump_ir: bool = False, output_dir: Optional[str] = None,
                   prefix: str = "pl") -> Program:
        """The whole pipeline; with `dump_ir`, the IR before and after every pass under output_dir/passes_dump."""
        if prefix != "pl":
            raise UnsupportedError(f"run_passes(prefix={prefix!r}): dumps are printed with the 'pl' prefix only")
        if not dump_ir:
            return self.run(program)
        if output_dir is None:
            raise ValueCheckError("run_passes(dump_ir=True) needs an output_dir to write passes_dump/ into",
                                  hint="pass output_dir=... or dump_ir=False")
        dump = DumpInstrument(os.path.join(output_dir, "passes_dump"))
        dump.dump("00_frontend.py", program)
        with PassContext.current().derive([dump]):
            return self.run(program)
