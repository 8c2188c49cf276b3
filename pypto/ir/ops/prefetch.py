"""prefetch.* ops: asynchronous GM → L2 prefetch (the reference's `pl.prefetch` family).

    c = pl.prefetch.make_context()
    e = pl.prefetch.async_prefetch(t, c)      # start pulling tensor t into L2
    s = pl.prefetch.session(c)
    pl.prefetch.wait(e, s)                    # the prefetch has landed

A prefetch moves no values (a later load reads the same bytes either way), so the handles are
opaque INT64 scalars and the simulator gives them no effect.
"""

from __future__ import annotations

from pypto.ir.dtypes import INT64
from pypto.ir.ops.common import expect_scalar, expect_tensor
from pypto.ir.ops.registry import READ, SHARED, OpDef, register_op
from pypto.ir.types import ScalarType, UnknownType


def _handle(args, kw):
    return ScalarType(INT64)


def _async_type(args, kw):
    expect_tensor("prefetch.async_prefetch", "src", args[0])
    expect_scalar("prefetch.async_prefetch", "ctx", args[1])
    return ScalarType(INT64)


def _session_type(args, kw):
    expect_scalar("prefetch.session", "ctx", args[0])
    return ScalarType(INT64)


def _wait_type(args, kw):
    expect_scalar("prefetch.wait", "event", args[0])
    expect_scalar("prefetch.wait", "session", args[1])
    return UnknownType()


register_op(OpDef("prefetch.make_context", deduce=_handle, affinity=SHARED, description="a prefetch context handle"))
register_op(OpDef("prefetch.async_prefetch", args=("src", "ctx"), deduce=_async_type, affinity=SHARED,
                  effects={0: READ}, self_loading=True, description="start prefetching a GM tensor into L2"))
register_op(OpDef("prefetch.session", args=("ctx",), deduce=_session_type, affinity=SHARED,
                  description="the session that waits on the context's prefetches"))
register_op(OpDef("prefetch.wait", args=("event", "session"), deduce=_wait_type, affinity=SHARED,
                  description="wait until a prefetch has landed"))
