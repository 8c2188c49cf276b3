"""pld.* ops in PTO codegen (mirrors pypto/ir/ops/distributed.py).

Host-level ops describe windows and ranks for the host orchestrator and never enter a kernel;
the collectives are composite and are expanded before codegen. The kernel-level primitives
(signals, remote loads / stores, rank queries) address peer windows through the CommCtx
parameter the reference's MaterializeDistTensorCtx pass adds to every kernel; that pass and
the `pto.comm.*` lowering are not built here, so those ops are declared not emitted (a named
UnsupportedError, never a guessed instruction).
"""

from __future__ import annotations

from pypto.codegen.pto.registry import lowered_away, not_emitted

for _name in ("pld.world_size", "pld.alloc_window_buffer", "pld.window", "pld.stacked_index"):
    lowered_away(_name, "host-level: it shapes the host orchestration (orchestration artifact), never a kernel")
for _name in ("allreduce", "barrier", "broadcast", "allgather", "reduce_scatter", "all_to_all", "all_to_all_v"):
    lowered_away(f"pld.tensor.{_name}", "composite: LowerCompositeOps (in kernels) or LowerHostTensorCollectives "
                                        "(host) expands it into signals and remote moves (seeds 000 / 001 / 002)")

_NEEDS_CTX = "distributed kernels need the CommCtx parameter (MaterializeDistTensorCtx) and pto.comm.* lowering"
for _name in ("pld.get_comm_ctx", "pld.rank", "pld.nranks", "pld.system.notify", "pld.system.wait",
              "pld.tile.remote_load", "pld.tile.remote_store", "pld.tile.put", "pld.tile.get"):
    not_emitted(_name, _NEEDS_CTX)
