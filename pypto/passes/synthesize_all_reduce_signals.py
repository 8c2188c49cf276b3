"""SynthesizeAllReduceSignals: a HOST-orchestrator allreduce without a signal gets a private INT32 signal window.

The host form `pld.tensor.allreduce(data)` may omit the signal; every later stage (the builtin
chip dispatch, the credit-barrier recipe) needs one. The pass allocates a symmetric
[MAX_RANKS, 1] INT32 window at the top of the host body (zero-initialised, shared by every
signal-less allreduce of one data window: the self-cleaning protocol leaves it at zero after each
call) and rewrites each such call to the explicit two-argument form on a window view of it.
`core_num=k` calls get a [MAX_RANKS, k] window (a lane per block); allreduces of different data
windows get different signals, so each signal joins the comm domain of its data.
MAX_RANKS is 64, the simulator comm backend's rank limit; only rows < nranks are touched.

Requires: — / Produces: — / Invalidates: —
Seed: 001 (LowerCompositeOps overview: host allreduce calls skip the pass; this one normalises them first).

    before:  data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
    after:   __allreduce_signal_buf = pld.alloc_window_buffer([64, 1], dtype=pl.INT32)      # top of body
             __allreduce_signal = pld.window(__allreduce_signal_buf, [64, 1], dtype=pl.INT32)
             data = pld.tensor.allreduce(data, __allreduce_signal, op=pld.ReduceOp.Sum)
"""

from __future__ import annotations

from pypto.ir.dtypes import INT32
from pypto.ir.expr import Call, MakeTuple, Var, const
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts, flatten_to_stmts
from pypto.ir.visitor import SplicingMutator
from pypto.passes.base import Pass, function_pass
from pypto.passes.materialize_comm_domain_scopes import assignment_defs, window_buffer_of
from pypto.passes.properties import PassProperties

MAX_RANKS = 64


def _is_host(f: Function) -> bool:
    return getattr(f.level, "name", None) == "HOST"


class _AddSignals(SplicingMutator):
    """One [MAX_RANKS, lanes] buffer per data window and lane count: core_num=k calls get k lanes (one per
    block), and allreduces of windows used by different ranks get signals of their own (a signal lives in
    the comm domain of its data)."""

    def __init__(self, defs: dict):
        self.defs = defs
        self.buffers: dict = {}                    # (data window buffer, lanes) -> signal buffer Var
        self.alloc_stmts: list = []

    def _buffer(self, data, lanes: int, span):
        key = (window_buffer_of(data, self.defs), lanes)
        if key not in self.buffers:
            alloc = create_op_call("pld.alloc_window_buffer", [MakeTuple([const(MAX_RANKS), const(lanes)])],
                                   {"dtype": INT32}, span)
            name = "__allreduce_signal_buf" + (f"_{lanes}" if lanes != 1 else "") + \
                (f"_{len(self.buffers)}" if self.buffers else "")
            self.buffers[key] = Var(name, alloc.type, span)
            self.alloc_stmts.append(AssignStmt(self.buffers[key], alloc, span))
        return self.buffers[key]

    def mutate_assign_stmt(self, s: AssignStmt):
        v = s.value
        if isinstance(v, Call) and not v.is_function_call() and v.op.name == "pld.tensor.allreduce" \
                and len(v.args) == 1:
            lanes = max(int(v.kwargs.get("core_num", 1)), 1)
            view = create_op_call("pld.window", [self._buffer(v.args[0], lanes, s.span),
                                                 MakeTuple([const(MAX_RANKS), const(lanes)])], {"dtype": INT32}, s.span)
            sig = Var("__allreduce_signal", view.type, s.span)
            call = create_op_call("pld.tensor.allreduce", [v.args[0], sig], dict(v.kwargs), v.span)
            return SeqStmts([AssignStmt(sig, view, s.span), s.replace(value=call)], s.span)
        return s


def transform_synthesize_all_reduce_signals(func: Function, program: Program) -> Function:
    if not _is_host(func):
        return func
    m = _AddSignals(assignment_defs(func.body))
    body = m.mutate(func.body)
    if not m.buffers:
        return func
    stmts = m.alloc_stmts + [x for st in flatten_to_stmts(body) for x in flatten_to_stmts(st)]
    return func.replace(body=SeqStmts(stmts, func.body.span))


def synthesize_all_reduce_signals() -> Pass:
    return function_pass("SynthesizeAllReduceSignals", transform_synthesize_all_reduce_signals, PassProperties())
