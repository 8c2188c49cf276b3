"""`import pypto.language.distributed as pld`: the distributed namespace (minimal for now).

Only the `pld.DistributedTensor[[shape], dtype]` annotation exists, so printed programs that
use distributed tensor types parse back; the communication ops are not built yet.
"""

from __future__ import annotations

from pypto.language.typing import tensor_type


class DistributedTensor:
    """`pld.DistributedTensor[[shape], dtype]`: a per-rank slice of a communication window."""

    def __class_getitem__(cls, item):
        return tensor_type(item, distributed=True)


def __getattr__(name: str):
    raise AttributeError(f"pld.{name} is not supported yet: the distributed op namespace is not built "
                         "(only pld.DistributedTensor annotations are available)")
