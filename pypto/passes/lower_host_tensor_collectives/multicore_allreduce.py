"""The builtin of a host `pld.tensor.allreduce(..., core_num=k)`: one synchronized grid of k AIV blocks per rank.

The host form's `core_num` spreads one mesh allreduce over k blocks of each rank's chip (the
reference's user guide, Collectives § Multi-core). The payload, seen as one packed `[1, SIZE]`
row, is cut into 256-element tiles dealt out block-cyclically: block b owns tiles b, b + k,
b + 2k, ... Each block runs the credit-barrier protocol of the single-core recipe on its own
signal lane (column b of the `[NR, stride]` signal, stride >= k), so blocks never see each
other's credits: a ready barrier (generation 1), then per owned tile: load it padded, fold every
peer's same tile into it with the ReduceOp, barrier on generation 2 + i (no rank overwrites a
tile a slower peer may still read), store the valid part. The epilogue retires the lane's
1 + (owned tiles) credits, so every lane ends at zero and one signal serves back-to-back calls.
The Orchestration wrapper launches the kernel as `pl.spmd(k, sync_start=True)`: all blocks are
admitted at once, which is why k may not exceed the platform's AIV cores.

The kernel is written as DSL text and read by the parser the pass context carries (the same one
the round-trip check uses), since the recipe is easiest to read as the program it is.
"""

from __future__ import annotations

from pypto.errors import InternalError, TypeCheckError, UnsupportedError
from pypto.ir.comm_enums import ReduceOp
from pypto.ir.dtypes import FP16, FP32, INT32
from pypto.ir.expr import Call, ConstInt
from pypto.ir.types import DistributedTensorType
from pypto.passes.context import PassContext, current_platform

TILE = 256          # elements per block-cyclic tile
_REDUCE = {ReduceOp.Sum: "pl.add", ReduceOp.Max: "pl.maximum", ReduceOp.Min: "pl.minimum", ReduceOp.Prod: "pl.mul"}


def core_num_of(call: Call) -> int:
    return int(call.kwargs.get("core_num", 1))


def _static(dims, what: str, call: Call) -> list:
    out = [d.value if isinstance(d, ConstInt) else None for d in dims]
    if None in out:
        raise UnsupportedError(f"host pld.tensor.allreduce(core_num={core_num_of(call)}): the {what} "
                               f"{[str(d) for d in dims]} is not static", call.span,
                               hint="give the window static dims (core_num > 1 deals out a known number of tiles)")
    return out


def check(call: Call) -> tuple:
    """(data dims, signal dims) after the multi-core rules of the user guide; errors name the call."""
    k = core_num_of(call)
    if call.kwargs.get("mode", "mesh") != "mesh":
        raise UnsupportedError(f"host pld.tensor.allreduce: mode={call.kwargs['mode']!r} requires core_num == 1, "
                               f"got core_num={k}", call.span, hint="core_num spreads the mesh recipe only")
    cores = 2 * current_platform().clusters
    if k > cores:
        raise UnsupportedError(f"host pld.tensor.allreduce(core_num={k}) exceeds the {cores} AIV cores of the "
                               "target: the synchronized launch needs every block admitted at once", call.span)
    data, signal = call.args[0], call.args[1]
    t = data.type
    if not isinstance(t, DistributedTensorType) or t.dtype not in (FP16, FP32):
        raise TypeCheckError(f"host pld.tensor.allreduce: a mesh target is an FP16 or FP32 window, got {t}", call.span)
    if t.tensor_view is not None and (t.tensor_view.valid_shape or t.tensor_view.stride):
        raise UnsupportedError(f"host pld.tensor.allreduce(core_num={k}) on a window with a partial valid shape or "
                               "strides", call.span, hint="allreduce a fully valid, packed window")
    s = signal.type
    if not isinstance(s, DistributedTensorType) or s.dtype is not INT32:
        raise TypeCheckError(f"host pld.tensor.allreduce: the signal must be an INT32 window, got {s}", call.span)
    if len(s.shape) != 2:
        raise TypeCheckError(f"host pld.tensor.allreduce(core_num={k}): the signal needs one lane per block, "
                             f"[world_size(), stride] with stride >= {k}; got {list(s.shape)}", call.span,
                             hint="a rank-1 [world_size()] signal only works for core_num=1")
    sdims = _static(s.shape, "signal shape", call)
    if sdims[1] < k:
        raise TypeCheckError(f"host pld.tensor.allreduce(core_num={k}): signal stride {sdims[1]} < core_num "
                             f"(one lane per block)", call.span)
    return _static(t.shape, "window shape", call), sdims


def _type_text(dims: list, dtype) -> str:
    return f"pld.DistributedTensor[[{', '.join(str(d) for d in dims)}], pl.{dtype.name}]"


def program_text(name: str, call: Call) -> str:
    dims, sdims = check(call)
    k = core_num_of(call)
    total = 1
    for d in dims:
        total *= d
    tiles = -(-total // TILE)
    T, S = _type_text(dims, call.args[0].type.dtype), _type_text(sdims, INT32)
    reduce = _REDUCE[call.kwargs.get("op", ReduceOp.Sum)]
    return f'''import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class {name}_program:
    @pl.function(type=pl.FunctionType.InCore)
    def {name}(self, data: pl.InOut[{T}], signal: pl.InOut[{S}]) -> {T}:
        flat = pl.tensor.view(data, [1, {total}])
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        nranks = pld.nranks(ctx)
        lane = pl.tile.get_block_idx()
        owned = ({tiles} - lane + {k - 1}) // {k}
        for p in pl.range(nranks):
            if p != me:
                pld.system.notify(signal, p, [me, lane], 1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(nranks):
            if q != me:
                pld.system.wait(signal, [q, lane], 1, cmp=pld.WaitCmp.Ge)
        for i in pl.range(owned):
            c0 = (lane + i * {k}) * {TILE}
            w = pl.min({TILE}, {total} - c0)
            acc = pl.tile.fillpad_inplace(pl.load(flat, [0, c0], [1, {TILE}], valid_shape=[1, w]))
            for p2 in pl.range(nranks):
                if p2 != me:
                    got = pld.tile.remote_load(flat, p2, [0, c0], [1, {TILE}], [1, w])
                    acc = {reduce}(acc, pl.tile.fillpad_inplace(got))
            for p3 in pl.range(nranks):
                if p3 != me:
                    pld.system.notify(signal, p3, [me, lane], 1, op=pld.NotifyOp.AtomicAdd)
            for q3 in pl.range(nranks):
                if q3 != me:
                    pld.system.wait(signal, [q3, lane], pl.cast(2 + i, pl.INT32), cmp=pld.WaitCmp.Ge)
            flat = pl.store(pl.tile.set_validshape(acc, 1, w), [0, c0], flat)
        for q4 in pl.range(nranks):
            if q4 != me:
                pld.system.notify(signal, me, [q4, lane], pl.cast(-1 - owned, pl.INT32), op=pld.NotifyOp.AtomicAdd)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def {name}_orch(self, data: pl.InOut[{T}], signal: pl.InOut[{S}]) -> {T}:
        with pl.spmd({k}, sync_start=True):
            data = self.{name}(data, signal)
        return data
'''


def builtin_functions(name: str, call: Call) -> list:
    """The parsed (not yet lowered) kernel, Spmd-launching wrapper: the functions of the sub-build."""
    parse = PassContext.current().parser()
    if parse is None:
        raise InternalError("host allreduce with core_num > 1 builds its builtin from DSL text and needs the parser",
                            hint="run the pipeline inside PassContext(parse=pl.parse) (ir.compile does)")
    program = parse(program_text(name, call))
    return list(program.functions.values())
