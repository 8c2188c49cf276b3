"""pypto.passes: the pass infrastructure (Pass, PassContext, instruments, properties, PassManager)
and one module per pass, each exporting a factory named after it (`convert_to_ssa()` ...).

    from pypto.passes import PassManager, OptimizationStrategy
    final = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(program)
"""

from pypto.passes.context import PassContext, VerificationLevel, current_platform, verify_level_from_env
from pypto.passes.instruments import (CallbackInstrument, DumpInstrument, Instrument, RoundtripInstrument,
                                      TimingInstrument, VerificationInstrument, VerificationMode,
                                      make_roundtrip_instrument)
from pypto.passes.manager import DEFAULT_PIPELINE, OptimizationStrategy, Pass, PassManager, function_pass
from pypto.passes.properties import IRProperty, IRPropertySet, PassProperties
