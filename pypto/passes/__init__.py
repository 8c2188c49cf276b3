"""pypto.passes: the pass infrastructure (Pass, PassContext, instruments, properties, PassManager)
and one module (or package) per pass, each exporting a factory named after it (`convert_to_ssa()` ...;
`pypto.pypto_core.passes` gathers them; they are not re-exported here, where they would shadow their modules).

Layout: the infrastructure (base.py Pass, context.py, instruments.py, properties.py, manager.py
with the Default pipeline, chip_pipeline.py); one module or package per pass (a package owns
its helpers: memory/, infer_tile_memory_space/, optimize_orch_tensors/, ...); generic analyses
used by many passes in analysis/.

    from pypto.passes import PassManager, OptimizationStrategy
    final = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(program)
    tiles = PassManager().run(program, until="InferTileMemorySpace")
"""

from pypto.passes.context import PassContext, VerificationLevel, current_platform, verify_level_from_env
from pypto.passes.base import Pass, function_pass, run_pipeline
from pypto.passes.instruments import (CallbackInstrument, DumpInstrument, Instrument, PassSelection,
                                      RoundtripInstrument, TimingInstrument, VerificationInstrument,
                                      VerificationMode, make_roundtrip_instrument, verify_properties)
from pypto.passes.chip_pipeline import CHIP_PIPELINE
from pypto.passes.manager import DEFAULT_PIPELINE, OptimizationStrategy, PassManager
from pypto.passes.properties import IRProperty, IRPropertySet, PassProperties


# The reference's `passes.<factory>()` spelling (see factories.py).
import sys as _sys  # noqa: E402

from pypto.passes import factories as _factories  # noqa: E402

_sys.modules[__name__].__class__ = _factories.PassesPackage


def __getattr__(name):
    if name in ("run_verifier", "unroll_loops"):
        return getattr(_factories, name)
    import importlib.util
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a pass not loaded yet
    raise AttributeError(f"module 'pypto.passes' has no attribute {name!r}")
