"""pld.system.defer_wait in PTO codegen (op in pypto/ir/ops/distributed.py).

The reference hands the condition to the task runtime (the TaskId stays pending until the
signal cell reaches the threshold); that needs the CommCtx parameter and the runtime's
deferred-completion hook, which the PTO path does not build (like the other pld kernel ops).
"""

from __future__ import annotations

from pypto.codegen.pto.registry import not_emitted

not_emitted("pld.system.defer_wait", "deferred task completion needs the CommCtx parameter "
                                     "(MaterializeDistTensorCtx) and the runtime's deferred-completion hook")
