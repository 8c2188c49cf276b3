"""InjectGMPipeBuffer: on a2a3 the cross-core rings live in GM, so every kernel with pipes gets a
`__gm_pipe_buffer` Out tensor, threaded up the call graph to the orchestration, which creates it.

Requires: SSAForm, MixedKernelExpanded / Produces: — (keeps both) / Invalidates: —
Reference: pass doc 22 (compiler-and-runtime.md §2 dump 23; §5.5 "Cross-core pipe": a2a3 ring in
GM, C2V at offset 0, V2C at slot_num * slot_size). a5 rings sit in the consumer's SRAM
(reserve_buffer), so there the pass is a no-op, as for programs without pipes.

Steps: (1) the seeds are the functions whose body calls `system.aic/aiv_initialize_pipe` and
that have no `__gm_pipe_buffer` yet (a hand-written one is kept as the author wrote it);
(2) each seed and, transitively, each non-Orchestration caller (Group, Spmd wrapper) gets the
param appended last (direction Out) and forwards it at its call sites; (3) an Orchestration
caller creates one buffer per call site, `gm_pipe_buffer_N = tensor.create([n], FP32)`, placed
right before the call.

Sizing. The reference's older form sized the buffer from the initialize_pipe geometry (one
slot_size x slot count per pipe, FP32 elements rounded up); its newer form leaves a one-element
placeholder and lets codegen size it. We size it here, in the IR, so the simulator and codegen
read the same number: the rings of each pipe id (ascending) are laid out one after the other,
C2V first, each `slot_num * slot_size` bytes (`slot_num` is always spelled by ExpandMixedKernel);
the total, rounded up to FP32 elements, is one cluster's region. Each pipe function records
where its rings start inside the region in `attrs["gm_pipe_offsets"]` ({"c2v@<id>": byte offset,
"v2c@<id>": ...}), which PTO codegen turns into the `gm_slot_buffer` operand of initialize_pipe.
Blocks. An Spmd launch of core_num = n runs n blocks at once, each on its own cluster with its
own rings, so the buffer threaded through the Spmd wrapper and everything beneath it holds n
regions (the whole buffer is passed down; block b's rings start at b x buffer / block_num, as the
reference's kernels shard it by block index). The simulator binds each ring to those bytes.

    before:  Group k(x, out): self.k_aic(x, out); self.k_aiv(x, out)      Orch: self.k(x, out)
    after:   Group k(x, out, __gm_pipe_buffer: Out): self.k_aic(x, out, __gm_pipe_buffer); ...
             Orch: gm_pipe_buffer_0 = tensor.create([1024], FP32); self.k(x, out, gm_pipe_buffer_0)
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, ConstInt, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, SeqStmts
from pypto.ir.types import TensorType
from pypto.ir.visitor import SplicingMutator
from pypto.passes.analysis import calls_in
from pypto.passes.base import Pass
from pypto.passes.properties import IRProperty, PassProperties

GM_PIPE_BUFFER = "__gm_pipe_buffer"
OFFSETS_ATTR = "gm_pipe_offsets"
BLOCKS_ATTR = "gm_pipe_blocks"          # regions in the buffer (an Spmd launch: core_num); absent = 1
_INITS = ("system.aic_initialize_pipe", "system.aiv_initialize_pipe")
_DEFAULT_SLOT_NUM = 2


def ring_geometry(func: Function) -> dict:
    """{(direction, pipe id): ring bytes} of the pipes the function initializes."""
    rings: dict = {}
    for c in calls_in(func.body):
        if isinstance(c.op, GlobalVar) or c.op.name not in _INITS:
            continue
        mask = int(c.kwargs.get("dir_mask") or 0)
        size = int(c.kwargs.get("slot_size") or 0) * int(c.kwargs.get("slot_num") or _DEFAULT_SLOT_NUM)
        pipe = int(c.kwargs.get("id") or 0)
        for bit, direction in ((1, "c2v"), (2, "v2c")):
            if mask & bit:
                rings[(direction, pipe)] = max(rings.get((direction, pipe), 0), size)
    return rings


def ring_layout(rings: dict) -> tuple:
    """({"c2v@id": byte offset, ...}, total bytes): pipe ids ascending, C2V before V2C."""
    offsets, at = {}, 0
    for direction, pipe in sorted(rings, key=lambda k: (k[1], k[0] != "c2v")):
        offsets[f"{direction}@{pipe}"] = at
        at += rings[(direction, pipe)]
    return offsets, at


def _buffer_type(nbytes: int, blocks: int = 1) -> TensorType:
    """`blocks` regions of the per-cluster ring bytes, each rounded up to FP32 elements."""
    return TensorType([blocks * max(1, -(-nbytes // 4))], FP32)


def _core_num(func: Function, funcs: dict) -> int:
    """The Spmd function's block count: its own attr, or the largest a call site's attrs give it."""
    counts = [func.attrs.get("core_num", 1)]
    counts += [c.attrs["core_num"] for f in funcs.values() for c in calls_in(f.body)
               if isinstance(c.op, GlobalVar) and c.op.name == func.name and "core_num" in c.attrs]
    counts = [getattr(n, "value", n) for n in counts]
    if not all(isinstance(n, int) for n in counts):
        raise UnsupportedError(f"InjectGMPipeBuffer: Spmd launch '{func.name}' with a core_num that is not a "
                               "constant (its pipe buffer needs one region per block)", func.span,
                               hint="write pl.spmd(4), a literal block count")
    return max(1, *counts)


def _launch_blocks(funcs: dict, threaded: set, callers: dict) -> dict:
    """{threaded function: blocks its buffer holds}: an Spmd wrapper launches core_num blocks, each on
    its own cluster with its own rings, so it and everything beneath it get core_num regions (the
    largest count when several launches share a kernel); a plain Group call is one block."""
    memo: dict = {}

    def blocks(n: str, seen=()) -> int:
        if n not in memo:
            own = _core_num(funcs[n], funcs) if funcs[n].func_type is FunctionType.Spmd else 1
            above = [blocks(c, (*seen, n)) for c in callers.get(n, ()) if c in threaded and c not in seen]
            memo[n] = max([own, *above])
        return memo[n]

    return {n: blocks(n) for n in threaded}


def _callees(func: Function, names) -> list:
    return [c.op.name for c in calls_in(func.body) if isinstance(c.op, GlobalVar) and c.op.name in names]


class _Forward(SplicingMutator):
    """Appends the buffer to every call of a threaded function; an Orchestration creates one per call."""

    def __init__(self, threaded: set, buffer_of, create: bool):
        self.threaded = threaded
        self.buffer_of = buffer_of          # callee name → the Var to pass (or its type, when creating)
        self.create = create
        self.counter = 0

    def _rewrite(self, c):
        if not isinstance(c, Call) or not isinstance(c.op, GlobalVar) or c.op.name not in self.threaded:
            return None, None
        if not self.create:
            return None, c.replace(args=(*c.args, self.buffer_of(c.op.name)))
        t = self.buffer_of(c.op.name)
        var = Var(f"gm_pipe_buffer_{self.counter}", t, c.span)
        self.counter += 1
        make = create_op_call("tensor.create", [MakeTuple([ConstInt(t.shape[0].value, INDEX)])], {"dtype": FP32},
                              c.span)
        return AssignStmt(var, make, c.span), c.replace(args=(*c.args, var))

    def mutate_assign_stmt(self, s):
        made, call = self._rewrite(s.value)
        if call is None:
            return s
        new = s.replace(value=call)
        return SeqStmts([made, new], s.span) if made is not None else new

    def mutate_eval_stmt(self, s):
        made, call = self._rewrite(s.expr)
        if call is None:
            return s
        new = s.replace(expr=call)
        return SeqStmts([made, new], s.span) if made is not None else new


def _has_buffer(func: Function) -> bool:
    return any(p.name_hint == GM_PIPE_BUFFER for p in func.params)


def inject(program: Program) -> Program:
    funcs = program.functions
    seeds = {n for n, f in funcs.items() if not _has_buffer(f) and ring_geometry(f)}
    if not seeds:
        return program
    callers: dict = {}
    for n, f in funcs.items():
        for callee in _callees(f, funcs):
            callers.setdefault(callee, set()).add(n)
    threaded, orchestrations, work = set(seeds), set(), list(seeds)
    while work:
        for caller in callers.get(work.pop(), ()):
            if funcs[caller].func_type is FunctionType.Orchestration:
                orchestrations.add(caller)
            elif caller not in threaded and not _has_buffer(funcs[caller]):
                threaded.add(caller)
                work.append(caller)
    rings = {n: dict(ring_geometry(funcs[n])) for n in threaded}
    changed = True
    while changed:                          # a caller's buffer holds every ring of its callees
        changed = False
        for n in threaded:
            for callee in _callees(funcs[n], threaded):
                for k, b in rings[callee].items():
                    if rings[n].get(k, 0) < b:
                        rings[n][k] = b
                        changed = True
    blocks = _launch_blocks(funcs, threaded, callers)
    params = {n: Var(GM_PIPE_BUFFER, _buffer_type(ring_layout(rings[n])[1], blocks[n]), funcs[n].span)
              for n in threaded}
    out = []
    for n, f in funcs.items():
        if n in threaded:
            body = _Forward(threaded, lambda _callee, v=params[n]: v, False).mutate(f.body)
            attrs = {**f.attrs, OFFSETS_ATTR: ring_layout(ring_geometry(f))[0]} if n in seeds else f.attrs
            if n in seeds and blocks[n] > 1:        # codegen offsets each block into its own region
                attrs = {**attrs, BLOCKS_ATTR: blocks[n]}
            f = f.replace(params=(*f.params, params[n]), param_directions=(*f.param_directions, ParamDirection.Out),
                          body=body, attrs=attrs)
        elif n in orchestrations:
            f = f.replace(body=_Forward(threaded, lambda callee: params[callee].type, True).mutate(f.body))
        out.append(f)
    return program.with_functions(out)


def _run(program: Program) -> Program:
    from pypto.passes.context import current_platform
    if current_platform().name != "a2a3":
        return program
    return inject(program)


def inject_gm_pipe_buffer() -> Pass:
    return Pass("InjectGMPipeBuffer", _run,
                PassProperties(required={IRProperty.SSAForm, IRProperty.MixedKernelExpanded}))
