"""system.* synchronisation, cache and device-geometry ops the reference exposes beside the barriers.

    pl.system.sync_set(3, pipe=pl.PipeType.MTE3)     # raise cross-core event 3 (its sync_wait consumes it)
    pl.system.sync_wait(3, pipe=pl.PipeType.MTE3)
    pl.system.syncall(mode="soft", gm_workspace=ws, used_cores=n)   # all-core barrier through a GM counter
    pl.system.set_ffts(ws)                          # the FFTS base for hardware cross-core flags
    pl.system.cacheinvalid()                        # drop cached GM lines (whole GM, or one tensor's line)
    n = pl.system.available_aiv_count()             # device geometry, for spmd sizing
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INDEX, INT32, INT64
from pypto.ir.enums import PipeType
from pypto.ir.expr import as_int
from pypto.ir.ops.common import expect_scalar, expect_tensor, expect_tuple
from pypto.ir.ops.registry import READ, READWRITE, SHARED, Kwarg, OpDef, register_op
from pypto.ir.types import ScalarType, UnknownType

CORE_TYPES = ("mix", "aiv_only", "aic_only")
SYNC_CORE_TYPES = (None, "aic", "aiv")


def _event(name: str, args, kw) -> None:
    expect_scalar(name, "event_id", args[0])
    v = as_int(args[0])
    if v is not None and not 0 <= v <= 13:
        raise TypeCheckError(f"{name}: event_id {v} is outside the user range 0..13 (14 and 15 are reserved)")
    if kw["core_type"] not in SYNC_CORE_TYPES:
        raise TypeCheckError(f"{name}: core_type must be 'aic' or 'aiv' (or omitted), got {kw['core_type']!r}")


def _sync_set_type(args, kw):
    _event("system.sync_set", args, kw)
    if kw["ffts_mode"] not in (None, 0, 1, 2):
        raise TypeCheckError(f"system.sync_set: ffts_mode must be 0, 1 or 2, got {kw['ffts_mode']!r}")
    return UnknownType()


def _sync_wait_type(args, kw):
    _event("system.sync_wait", args, kw)
    return UnknownType()


_CORE = {"core_type": Kwarg(str, None)}
register_op(OpDef("system.sync_set", args=("event_id",), deduce=_sync_set_type, affinity=SHARED,
                  kwargs={"pipe": Kwarg(PipeType), "ffts_mode": Kwarg(int, None), **_CORE},
                  description="raise a cross-core event on a pipe; the peer's sync_wait consumes it"))
register_op(OpDef("system.sync_wait", args=("event_id",), deduce=_sync_wait_type, affinity=SHARED,
                  kwargs={"pipe": Kwarg(PipeType), **_CORE},
                  description="wait for (and consume) a cross-core event raised by sync_set"))


def _pipe_flag_type(name: str):
    def deduce(args, kw):
        if not 0 <= kw["event_id"] <= 7:
            raise TypeCheckError(f"{name}: event_id must be 0..7 (a pipe flag), got {kw['event_id']}")
        return UnknownType()
    return deduce


# Intra-core pipe flags (set_flag / wait_flag): sync_src raises the flag from set_pipe to wait_pipe,
# sync_dst waits for it. A compiler pass usually places them; they are spelled here for hand tuning.
_FLAG_KW = {"set_pipe": Kwarg(PipeType), "wait_pipe": Kwarg(PipeType), "event_id": Kwarg(int)}
register_op(OpDef("system.sync_src", kwargs=dict(_FLAG_KW), deduce=_pipe_flag_type("system.sync_src"),
                  affinity=SHARED, description="set the pipe flag event_id from set_pipe towards wait_pipe"))
register_op(OpDef("system.sync_dst", kwargs=dict(_FLAG_KW), deduce=_pipe_flag_type("system.sync_dst"),
                  affinity=SHARED, description="wait for (and consume) the pipe flag sync_src set"))


def _syncall_type(args, kw):
    name = "system.syncall"
    if kw["mode"] not in ("hard", "soft"):
        raise TypeCheckError(f"{name}: mode must be 'hard' or 'soft', got {kw['mode']!r}")
    if kw["core_type"] not in CORE_TYPES:
        raise TypeCheckError(f"{name}: core_type must be one of {', '.join(CORE_TYPES)}, got {kw['core_type']!r}")
    if kw["mode"] == "hard":
        if args:
            raise TypeCheckError(f"{name}: mode='hard' takes no gm_workspace / used_cores",
                                 hint="pass mode='soft' for the GM-polling barrier")
        return UnknownType()
    if len(args) != 2:
        raise TypeCheckError(f"{name}: mode='soft' needs gm_workspace (a zeroed INT32 GM tensor) and used_cores")
    ws = expect_tensor(name, "gm_workspace", args[0])
    n = 1
    for d in ws.shape:
        n *= as_int(d) or 16
    if ws.dtype is not INT32 or n < 16:
        raise TypeCheckError(f"{name}: gm_workspace must be an INT32 tensor of at least 16 elements (one 64-byte "
                             f"cache line), got {ws.dtype.name} with {n}")
    used = expect_scalar(name, "used_cores", args[1])
    if not used.dtype.is_int():
        raise TypeCheckError(f"{name}: used_cores must be an integer, got {used.dtype.name}")
    return UnknownType()


register_op(OpDef("system.syncall", args=("gm_workspace", "used_cores"), min_args=0, deduce=_syncall_type,
                  kwargs={"core_type": Kwarg(str, "mix"), "mode": Kwarg(str, "hard")}, affinity=SHARED,
                  effects={0: READWRITE}, self_loading=True,
                  description="all-core barrier: hard (FFTS, full occupancy) or soft (a GM arrival counter)"))


def _set_ffts_type(args, kw):
    ws = expect_tensor("system.set_ffts", "workspace", args[0])
    if ws.rank != 1 or ws.dtype is not INT64 or (as_int(ws.shape[0]) or 0) < 256:
        raise TypeCheckError("system.set_ffts: workspace must be a 1-D INT64 tensor of at least 256 elements")
    return UnknownType()


register_op(OpDef("system.set_ffts", args=("workspace",), deduce=_set_ffts_type, affinity=SHARED, effects={0: READ},
                  self_loading=True, description="set the FFTS base address for hardware cross-core flags"))


def _cacheinvalid_type(args, kw):
    if args:
        expect_tensor("system.cacheinvalid", "tensor", args[0])
        for k, arg in ((1, "shapes"), (2, "offsets")):
            if len(args) > k:
                expect_tuple("system.cacheinvalid", arg, args[k])
    return UnknownType()


register_op(OpDef("system.cacheinvalid", args=("tensor", "shapes", "offsets"), min_args=0, deduce=_cacheinvalid_type,
                  affinity=SHARED, self_loading=True,
                  description="invalidate cached GM lines: all of GM, or the line holding a tensor view's base"))


def _count_type(args, kw):
    return ScalarType(INDEX)


for _name, _why in (("available_aiv_count", "the device's vector cores (2 per cluster)"),
                    ("available_cluster_count", "the device's clusters (1 AIC + 2 AIV each)")):
    register_op(OpDef(f"system.{_name}", deduce=_count_type, affinity=SHARED, description=_why))
