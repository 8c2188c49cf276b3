"""pld.system.defer_wait in PTO codegen (op in pypto/ir/ops/distributed.py).

The kernel does not spin: it registers a counter-completion condition with the task runtime,
which keeps the task's TaskId pending until the local signal cell reaches the threshold. As in
the reference, that is a call to an external adapter the generated kernel wrapper implements,
`@pypto_register_counter_completion(raw_args, signal_base, element_offset, expected)`, declared
once at module scope; `raw_args` is a runtime-owned `!pto.ptr<i64>` parameter (the dispatch
arguments, through which the wrapper reaches the task's async context) appended after the
dynamic dims. The element offset is the cell's offset in the signal's layout, or -1 when a
coordinate is out of range (the adapter rejects it rather than watching a foreign word):

    pld.system.defer_wait(sig, [src, 0], g)  →  %o = src * 1 + 0 * 1 (index, -1 if out of range)
        func.call @pypto_register_counter_completion(%argN, %sig, %o_i64, %g_i64)
            : (!pto.ptr<i64>, !pto.ptr<i32>, i64, i64) -> ()
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits
from pypto.codegen.pto.types import ptr_type
from pypto.errors import UnsupportedError
from pypto.ir.dtypes import INT64
from pypto.ir.enums import TensorLayout
from pypto.ir.expr import ConstInt

ADAPTER = "pypto_register_counter_completion"
_ADAPTER_TYPE = "(!pto.ptr<i64>, !pto.ptr<i32>, i64, i64)"


def _static_strides(signal, span) -> tuple:
    """(extents, element strides) of the signal window as the kernel's tensor view lays it out: explicit
    strides, column-major for a DN view, else row-major (signals are static INT32 grids)."""
    t = signal.type
    view = t.tensor_view
    explicit = list(view.stride) if view is not None and view.stride else None
    if not all(isinstance(d, ConstInt) for d in list(t.shape) + (explicit or [])):
        raise UnsupportedError(f"PTO codegen: pld.system.defer_wait on a signal with the dynamic shape or strides "
                               f"{[str(x) for x in t.shape]}", span, hint="give the signal window a static shape")
    dims = [d.value for d in t.shape]
    if explicit is not None:
        return dims, [s.value for s in explicit]
    if view is not None and view.layout is TensorLayout.DN and len(dims) == 2:
        return dims, [1, dims[0]]
    strides, acc = [], 1
    for n in reversed(dims):
        strides.append(acc)
        acc *= n
    return dims, strides[::-1]


def _checked_offset(ctx, signal, offsets) -> str:
    """sum(offset_i * stride_i) as i64, -1 when any coordinate is outside [0, extent)."""
    dims, strides = _static_strides(signal, ctx.call.span)
    zero = ctx.const_index(0)
    total, oob = zero, None
    for off, extent, stride in zip(ctx.indices(offsets), dims, strides):
        below, past, bad = ctx.fresh("neg"), ctx.fresh("past"), ctx.fresh("oob")
        ctx.emit(f"{below} = arith.cmpi slt, {off}, {zero} : index")
        ctx.emit(f"{past} = arith.cmpi sge, {off}, {ctx.const_index(extent)} : index")
        ctx.emit(f"{bad} = arith.ori {below}, {past} : i1")
        if oob is not None:
            both = ctx.fresh("oob")
            ctx.emit(f"{both} = arith.ori {oob}, {bad} : i1")
            bad = both
        oob = bad
        term, acc = ctx.fresh("term"), ctx.fresh("elem")
        ctx.emit(f"{term} = arith.muli {off}, {ctx.const_index(stride)} : index")
        ctx.emit(f"{acc} = arith.addi {total}, {term} : index")
        total = acc
    checked, wide = ctx.fresh("elem"), ctx.fresh("elem")
    ctx.emit(f"{checked} = arith.select {oob}, {ctx.const_index(-1)}, {total} : index")
    ctx.emit(f"{wide} = arith.index_cast {checked} : index to i64")
    return wide


@emits("pld.system.defer_wait")
def _defer_wait(ctx):
    signal, offsets, expected = ctx.call.args
    if ptr_type(signal.type) != "!pto.ptr<i32>":
        raise UnsupportedError(f"PTO codegen: pld.system.defer_wait on a {ptr_type(signal.type)} signal",
                               ctx.call.span, hint="signal cells are INT32")
    elem = _checked_offset(ctx, signal, offsets)
    threshold = ctx.value_as(expected, INT64)
    raw_args = ctx.hidden_param("deferred_completion_args", "!pto.ptr<i64>")
    ctx.declare(f"func.func private @{ADAPTER}{_ADAPTER_TYPE}")
    ctx.emit(f"func.call @{ADAPTER}({raw_args}, {ctx.value(signal)}, {elem}, {threshold}) : {_ADAPTER_TYPE} -> ()")
