"""pld.tensor.put / pld.tensor.get → Vec staging tile(s) + chunked pld.tile.put / pld.tile.get.

dsl-surface §4 (`pld.tensor.put(dst, peer, src, dst_offsets, src_offsets, shape, *, atomic,
chunk_rows, chunk_cols, pipeline)`): a tensor-level one-sided copy between a local tensor and a
peer's window. The reference rewrites it to a staging `tile.create` plus the tile-level form;
here the chunking is explicit IR. The transfer is seen as 2-D [rows, cols] (rank 1 → [1, n];
rank > 2 without a region → [prod(leading), last] through `tensor.view`; a rank > 2 sub-region is a
loop over its leading dims, each step a 2-D transfer of the last two dims with extent [1, .., 1, r, c]).
The staging tile is
[chunk_rows, chunk_cols] (0 = the whole extent; with neither given it is bounded to one 16 KiB
UB tile, like the collectives' stages), and the region is walked chunk by chunk, the stage
narrowed to each chunk with `tile.set_validshape`. `pipeline=True` allocates two staging tiles
used alternately (even / odd chunk), the ping-pong the reference hands to pto-isa.
In an InCore kernel ConvertTensorToTileOps already turned a 2-D, static copy into one pld.tile.put /
get on its stage (two with pipeline=True; pto-isa walks the region); what reaches this rule is the rest.

    before:  pld.tensor.put(dst, peer, src, atomic=pld.AtomicType.Add)
    after:   stage = tile.create([CR, CC]); for r0 in range(0, R, CR): for c0 in range(0, C, CC):
             pld.tile.put(dst, peer, src, set_validshape(stage, min(CR, R - r0), min(CC, C - c0)),
                          [r0, c0], [r0, c0], [min(CR, R - r0), min(CC, C - c0)], atomic=Add)
"""

from __future__ import annotations

from math import prod

from pypto.errors import UnsupportedError
from pypto.ir.enums import AtomicType, MemorySpace
from pypto.ir.expr import BinaryExpr, ConstInt, MakeTuple, const
from pypto.passes.lower_composite_ops.builder import LoweringBuilder
from pypto.passes.lower_composite_ops.collective_protocol import UB_CHUNK_BYTES


def _static_dims(op: str, what: str, dims) -> tuple:
    vals = tuple(d.value if isinstance(d, ConstInt) else None for d in dims)
    if None in vals:
        raise UnsupportedError(f"{op}: the {what} {[str(d) for d in dims]} is not static; a transfer's extent must be "
                               "static to size its staging tile", hint="pass a static shape=[...]")
    return vals


def _is_whole(op: str, t, offsets, shape: tuple) -> bool:
    return all(isinstance(o, ConstInt) and o.value == 0 for o in offsets) and \
        shape == _static_dims(op, "tensor shape", t.type.shape)


def _as_2d(op: str, b: LoweringBuilder, t, offsets, shape: tuple):
    """(tensor seen as 2-D, its 2-D offsets) for a transfer of `shape` at `offsets` in `t`."""
    if len(shape) == 2:
        return t, list(offsets)
    if len(shape) == 1:
        flat = b.bind("flat", b.op("tensor.view", [t, MakeTuple([const(1), t.type.shape[0]])]))
        return flat, [const(0), offsets[0]]
    rows = prod(shape[:-1])
    flat = b.bind("flat", b.op("tensor.view", [t, MakeTuple([const(rows), const(shape[-1])])]))
    return flat, [const(0), const(0)]


def _stage_shape(rows: int, cols: int, itemsize: int, chunk_rows: int, chunk_cols: int) -> tuple:
    if chunk_rows or chunk_cols:
        return min(chunk_rows or rows, rows), min(chunk_cols or cols, cols)
    cc = min(cols, UB_CHUNK_BYTES // itemsize)
    return max(1, min(rows, UB_CHUNK_BYTES // (cc * itemsize))), cc


def _lower_transfer(kind: str, call, args: tuple, b: LoweringBuilder):
    op = f"pld.tensor.{kind}"
    dst, peer, src = args[:3]
    if len(args) == 6:
        dst_offs, src_offs = list(args[3].elements), list(args[4].elements)
        shape = _static_dims(op, "transfer shape", args[5].elements)
    else:
        shape = _static_dims(op, "src shape", src.type.shape)
        if shape != _static_dims(op, "dst shape", dst.type.shape):
            raise UnsupportedError(f"{op}: without offsets the whole src {list(shape)} goes to the whole dst "
                                   f"{list(dst.type.shape)}; the shapes differ",
                                   hint="pass dst_offsets, src_offsets and shape for a sub-region")
        dst_offs = src_offs = [const(0)] * len(shape)
    if len(dst_offs) != len(shape) or len(src_offs) != len(shape):
        raise UnsupportedError(f"{op}: dst and src regions must have the rank of shape {list(shape)}")
    if len(shape) > 2 and not (_is_whole(op, dst, dst_offs, shape) and _is_whole(op, src, src_offs, shape)):
        # a rank > 2 sub-region: its leading dims are looped, the last two chunked
        lead = list(shape[:-2])
        rows, cols = shape[-2], shape[-1]
    else:
        dst, dst_offs = _as_2d(op, b, dst, dst_offs, shape)
        src, src_offs = _as_2d(op, b, src, src_offs, shape)
        lead = []
        rows, cols = (1, shape[0]) if len(shape) == 1 else (prod(shape[:-1]), shape[-1])
    dtype = src.type.dtype
    kw = call.kwargs
    cr, cc = _stage_shape(rows, cols, dtype.get_byte(), kw.get("chunk_rows", 0), kw.get("chunk_cols", 0))
    n_stages = 2 if kw.get("pipeline") else 1
    stages = [b.bind("put_stage" if kind == "put" else "get_stage",
                     b.op("tile.create", [MakeTuple([const(cr), const(cc)])],
                          {"dtype": dtype, "target_memory": MemorySpace.Vec})) for _ in range(n_stages)]
    tile_kwargs = {"atomic": kw.get("atomic", AtomicType.None_)} if kind == "put" else {}
    n_col_chunks, n_row_chunks = -(-cols // cc), -(-rows // cr)

    def move(mb: LoweringBuilder, idx: list, r0, c0, stage):
        vr = mb.bind("chunk_rows", BinaryExpr("min", const(cr), BinaryExpr("sub", const(rows), r0)))
        vc = mb.bind("chunk_cols", BinaryExpr("min", const(cc), BinaryExpr("sub", const(cols), c0)))
        narrowed = mb.bind("stage_valid", mb.op("tile.set_validshape", [stage, vr, vc]))

        def region(offs):
            return MakeTuple([BinaryExpr("add", o, i) for o, i in zip(offs, idx)] +
                             [BinaryExpr("add", offs[-2], r0), BinaryExpr("add", offs[-1], c0)])
        extent = MakeTuple([const(1)] * len(idx) + [vr, vc])
        mb.emit_eval(mb.op(f"pld.tile.{kind}", [dst, peer, src, narrowed, region(dst_offs), region(src_offs), extent],
                           tile_kwargs))

    def chunk_index(idx: list, r0, c0):
        """The chunk's position in transfer order (the ping-pong stage alternates on its parity)."""
        linear = None                 # built without constant sub-terms (they would fold when re-parsed)
        for i, n in zip(idx, lead):
            linear = i if linear is None else BinaryExpr("add", BinaryExpr("mul", linear, const(n)), i)
        row = BinaryExpr("floordiv", r0, const(cr))
        linear = row if linear is None else BinaryExpr("add", BinaryExpr("mul", linear, const(n_row_chunks)), row)
        return BinaryExpr("add", BinaryExpr("mul", linear, const(n_col_chunks)), BinaryExpr("floordiv", c0, const(cc)))

    def chunks(lb: LoweringBuilder, idx: list):
        def col_loop(rb: LoweringBuilder, r0):
            def body(cb: LoweringBuilder, c0):
                if n_stages == 1:
                    return move(cb, idx, r0, c0, stages[0])
                even = BinaryExpr("eq", BinaryExpr("floormod", chunk_index(idx, r0, c0), const(2)), const(0))
                cb.emit_if(even, lambda t: move(t, idx, r0, c0, stages[0]), lambda e: move(e, idx, r0, c0, stages[1]))
            rb.emit_for("c0", 0, cols, cc, body)
        lb.emit_for("r0", 0, rows, cr, col_loop)

    def leading(lb: LoweringBuilder, idx: list):
        if len(idx) == len(lead):
            return chunks(lb, idx)
        lb.emit_for(f"i{len(idx)}", 0, lead[len(idx)], 1, lambda ib, i: leading(ib, idx + [i]))

    leading(b, [])
    return args[0]


def lower_tensor_put_rule(call, args: tuple, b: LoweringBuilder):
    return _lower_transfer("put", call, args, b)


def lower_tensor_get_rule(call, args: tuple, b: LoweringBuilder):
    return _lower_transfer("get", call, args, b)
