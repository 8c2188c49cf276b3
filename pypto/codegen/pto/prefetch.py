"""PTO entries of prefetch.* (mirrors pypto/ir/ops/prefetch.py): named gaps, not guessed spellings."""

from __future__ import annotations

from pypto.codegen.pto.registry import not_emitted

for _name in ("make_context", "async_prefetch", "session", "wait"):
    not_emitted(f"prefetch.{_name}", "the async prefetch family (pto.make_prefetch_async_context / "
                                     "pto.tprefetch_async) needs the runtime's SDMA workspace, which is not built")
