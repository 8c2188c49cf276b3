"""`import pypto.language.distributed as pld`: the distributed namespace.

    ctx = pld.get_comm_ctx(signal); me = pld.rank(ctx); n = pld.nranks(ctx)
    pld.system.notify(signal, peer, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, [src, 0], 1, cmp=pld.WaitCmp.Ge)
    t = pld.tile.remote_load(data, peer, [0, 0], [1, 64])
    signal = pld.tensor.barrier(signal)

Like `pl.*`, these names are DSL ops: the parser turns calls into `pld.*` IR ops; calling one
outside a kernel body raises. Short forms (`pld.remote_load`, `pld.world_size`, ...) name the
same ops as their three-segment spelling.
"""

from __future__ import annotations

from pypto.ir.comm_enums import NotifyOp, ReduceOp, WaitCmp
from pypto.ir.enums import AtomicType
from pypto.language.scopes import DslOp, OpNamespace
from pypto.language.scopes import comm_domain  # noqa: F401  (hook: MaterializeCommDomainScopes' scope)
from pypto.language.typing import tensor_type
from pypto.ir.types import CommCtxType as _CommCtxType

CommCtx = _CommCtxType()    # hook: `pld.CommCtx`, the kernel parameter type MaterializeDistTensorCtx adds

__all__ = ["DistributedTensor", "NotifyOp", "WaitCmp", "ReduceOp", "AtomicType", "system", "tile", "tensor"]


class DistributedTensor:
    """`pld.DistributedTensor[[shape], dtype]`: a per-rank slice of a communication window."""

    def __class_getitem__(cls, item):
        return tensor_type(item, distributed=True)


def _is_op(path: str) -> bool:
    from pypto.ir.ops.registry import has_op
    return has_op(path)


def _op_names() -> list:
    from pypto.ir.ops.registry import all_ops
    return [n for n in all_ops() if n.startswith("pld.")]


system = OpNamespace("pld.system", _is_op, _op_names)
tile = OpNamespace("pld.tile", _is_op, _op_names)
tensor = OpNamespace("pld.tensor", _is_op, _op_names)

_SHORT = {"world_size": "pld.world_size", "get_comm_ctx": "pld.get_comm_ctx", "rank": "pld.rank",
          "nranks": "pld.nranks", "alloc_window_buffer": "pld.alloc_window_buffer", "window": "pld.window",
          "remote_load": "pld.tile.remote_load", "remote_store": "pld.tile.remote_store"}


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    path = _SHORT.get(name)
    if path is not None:
        return DslOp(path)
    if _is_op(f"pld.{name}"):
        return DslOp(f"pld.{name}")
    raise AttributeError(f"pld.{name} does not exist; short forms: {', '.join(sorted(_SHORT))}; "
                         "other ops need three segments (pld.system.notify, pld.tile.put, pld.tensor.allreduce)")
