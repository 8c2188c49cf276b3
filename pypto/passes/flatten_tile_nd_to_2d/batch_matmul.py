"""FlattenTileNdTo2D, batched matmul: `tile.batch_matmul(_acc)` on [.., M, K] x [.., K, N] becomes one
2-D `tile.matmul(_acc)` per batch index, each fed by its own Mat → Left / Right window.

Where the split happens, and why here: a batch's [M, K] rows cannot be cut out of a Left / Right
tile (only the vector unit slices tiles, and L0A / L0B are cube-only), but they can be read out of
the Mat (L1) tile the operand was moved from: `tile.extract(mat, b * M, 0, [M, K], target_memory=Left)`
is one `pto.textract`. So the whole-batch Mat → Left / Right `tile.move` (written by the user or by
ConvertTensorToTileOps) is replaced by per-batch extracts, before AutoTileMatmulL0 and before
InferTileMemorySpace's operand moves ever see a batched operand; those passes stay 2-D only.
A move whose only readers are batched matmuls is dropped (its whole-batch L0 buffer never exists).
Batch dims broadcast like numpy's matmul: an operand with fewer or size-1 batch dims (e.g. a 2-D lhs
against a [B, K, N] rhs) is read at its own batch for every product batch. A tile.transpose_view of a
Mat operand with several batches (ConvertTensorToTileOps' a_trans / b_trans form) is dropped too: its
flattened form is not a stack of per-batch transposes, so each batch's natural window is extracted
(Mat → Mat) and viewed on its own.

The per-batch results stay separate Acc tiles [M, N] (an Acc tile is fractal, so batches are not
row slices of one [B * M, N] Acc tile). They may feed `tile.batch_matmul_acc` (per batch again),
`tile.store` (one flattened store per batch into the N-D window), for-loop carries (one iter-arg
per batch: a K loop of batch_matmul_acc) and a `tile.move` out of Acc (per-batch moves assembled
into one flattened [B * M, N] tile, which vector ops then read); any other use is UnsupportedError.

    before:  l = pl.tile.move(a_mat, Left);  r = pl.tile.move(b_mat, Right)      # a_mat [2, 16, 32] Mat
             c = pl.tile.batch_matmul(l, r);  out2 = pl.tile.store(c, [0, 0, 0], out)
    after:   l0 = pl.tile.extract(a2, 0, 0, [16, 32], target_memory=Left);  ...;  c0 = pl.tile.matmul(l0, r0)
             o0 = pl.tile.store(c0, [0, 0, 0], out, [1, 16, 16]);  ...  (batch 1 at [1, 0, 0])
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, Call, ConstInt, GlobalVar, IterArg, Var, as_int
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, YieldStmt, flatten_to_stmts
from pypto.ir.types import TileType
from pypto.ir.visitor import collect, collect_statements

BATCHED = ("tile.batch_matmul", "tile.batch_matmul_acc")
_SPACE = {"lhs": MemorySpace.Left, "rhs": MemorySpace.Right}


def _batch_count(t) -> int:
    count = 1
    for d in t.shape[:-2]:
        count *= as_int(d)
    return count


def batch_operand_moves(body) -> tuple:
    """Vars bound by a Mat → Left / Right tile.move → that move's Mat source, for the moves read only by
    batched matmuls (as lhs / rhs). Those moves are dropped; the batches extract from the source.
    Likewise a tile.transpose_view of a Mat tile with several batches (a b_trans / a_trans operand): its
    flattened form is not a stack of per-batch transposes, so each batch is cut out of the natural source
    and transposed on its own (BatchSplitter.matmul). Returns (every dropped Var, the dropped views)."""
    calls = collect(body, lambda n: isinstance(n, Call) and not isinstance(n.op, GlobalVar))
    moves, views = {}, {}
    for s in collect_statements(body, lambda n: isinstance(n, AssignStmt) and isinstance(n.value, Call)
                     and not isinstance(n.value.op, GlobalVar) and n.value.op.name in ("tile.move",
                                                                                         "tile.transpose_view")):
        src = s.value.args[0]
        if isinstance(src.type, TileType) and src.type.memory_space is MemorySpace.Mat and src.type.rank > 2:
            if s.value.op.name == "tile.move":
                moves[s.var] = src
            elif _batch_count(src.type) > 1:
                views[s.var] = src
    moves.update(views)
    batch_reads = {v: 0 for v in moves}
    for c in calls:
        for i, a in enumerate(c.args):
            if isinstance(a, Var) and a in moves and c.op.name in BATCHED and i >= len(c.args) - 2:
                batch_reads[a] += 1
    occurrences = {v: 0 for v in moves}          # binding site + every read, anywhere (calls, yields, returns)
    for v in collect(body, lambda n: isinstance(n, Var) and n in moves):
        occurrences[v] += 1
    dropped = {v: src for v, src in moves.items() if batch_reads[v] and occurrences[v] == batch_reads[v] + 1}
    return dropped, {v: src for v, src in views.items() if v in dropped}


class BatchSplitter:
    """Per-batch statements for batched matmuls and the stores of their results.
    `flat(e)` maps an original operand to its flattened value; `split` holds each batched result's
    per-batch Acc tiles."""

    def __init__(self, flat, dropped: tuple, defs: dict):
        (self.dropped, self.views), self.flat, self.defs = dropped, flat, defs
        self.split: dict = {}

    def _mat_source(self, operand, role: str, call: Call):
        t = operand.type
        if [as_int(v) for v in t.valid_shape] != [as_int(d) for d in t.shape]:
            raise UnsupportedError(f"FlattenTileNdTo2D: {call.op.name} operand '{role}' has a partial or dynamic "
                                   "valid region; the per-batch split extracts whole [M, K] / [K, N] windows",
                                   call.span, hint="pad the operand (pl.fillpad) or load whole batches")
        if operand in self.views:
            return None                      # cut and transposed per batch (matmul)
        if operand in self.dropped:
            return self.flat(self.dropped[operand])
        d = self.defs.get(operand)
        if isinstance(d, Call) and d.op.name == "tile.move" and d.args[0].type.memory_space is MemorySpace.Mat:
            return self.flat(d.args[0])
        if operand.type.memory_space is MemorySpace.Mat:
            return self.flat(operand)
        raise UnsupportedError(f"FlattenTileNdTo2D: {call.op.name} operand '{role}' ({getattr(operand, 'name_hint', '?')}"
                               f") is a {operand.type.memory_space.name} tile that is not a move out of Mat; a batch "
                               "cannot be cut out of it", call.span,
                               hint="load the operand into Mat and pl.move it to Left / Right right before the "
                                    "batched matmul")

    def matmul(self, var: Var, call: Call) -> list:
        span = call.span
        lhs, rhs = call.args[-2], call.args[-1]
        lt, rt = lhs.type, rhs.type
        m, k, n = (as_int(d) for d in (lt.shape[-2], lt.shape[-1], rt.shape[-1]))
        out_batch = [as_int(d) for d in var.type.shape[:-2]]
        batches = 1
        for d in out_batch:
            batches *= d
        acc = None
        if call.op.name == "tile.batch_matmul_acc":
            acc = self.split.get(call.args[0])
            if acc is None:
                raise UnsupportedError("FlattenTileNdTo2D: tile.batch_matmul_acc accumulates into a tile that is "
                                       "not the result of a tile.batch_matmul(_acc) in the same block", span,
                                       hint="start the accumulation with pl.tile.batch_matmul just before it")
        a_mat, b_mat = self._mat_source(lhs, "lhs", call), self._mat_source(rhs, "rhs", call)
        out, results = [], []

        def bind(name, value):
            v = Var(name, value.type, span)
            out.append(AssignStmt(v, value, span))
            return v

        def block(operand, mat, b, rows, cols, space):
            """Batch b's [rows, cols] window of an operand in `space`; a dropped transpose_view cuts the
            natural [cols, rows] window out of its source and transposes that."""
            name = f"{getattr(operand, 'name_hint', 'operand')}_b{b}"
            j = _operand_batch(b, out_batch, operand.type)
            if mat is not None:
                return bind(name, create_op_call("tile.extract", [mat, j * rows, 0, [rows, cols]],
                                                 {"target_memory": space}, span))
            source = self.flat(self.views[operand])
            natural = bind(f"{name}_mat", create_op_call("tile.extract", [source, j * cols, 0, [cols, rows]],
                                                          {"target_memory": MemorySpace.Mat}, span))
            view = bind(f"{name}_t", create_op_call("tile.transpose_view", [natural], {}, span))
            return bind(name, create_op_call("tile.extract", [view, 0, 0, [rows, cols]], {"target_memory": space},
                                             span))

        for b in range(batches):
            left = block(lhs, a_mat, b, m, k, MemorySpace.Left)
            right = block(rhs, b_mat, b, k, n, MemorySpace.Right)
            if acc is None:
                product = create_op_call("tile.matmul", [left, right], {}, span)
            else:
                product = create_op_call("tile.matmul_acc", [acc[b], left, right], {}, span)
            results.append(bind(f"{var.name_hint}_b{b}", product))
        self.split[var] = results
        return out

    def move(self, var, call: Call) -> tuple:
        """tile.move of a batched result out of Acc: each batch moves on its own and is assembled at rows
        [b * M, (b + 1) * M) of one flattened [B * M, N] tile in the target space."""
        span, parts = call.span, self.split[call.args[0]]
        space = call.kwargs["target_memory"]
        if space is MemorySpace.Acc or any(call.kwargs.get(k) is not None for k in ("blayout", "slayout")):
            raise UnsupportedError(f"FlattenTileNdTo2D: moving a batched matmul result to {space.name} with a layout "
                                   "change is not built", span, hint="move it to Vec (or Mat) as it is")
        m, n = (as_int(d) for d in parts[0].type.shape)
        out = []

        def bind(name, value):
            v = Var(name, value.type, span)
            out.append(AssignStmt(v, value, span))
            return v

        whole = bind(f"{var.name_hint}_all", create_op_call("tile.create", [[m * len(parts), n]],
                                                            {"dtype": parts[0].type.dtype, "target_memory": space},
                                                            span))
        for b, part in enumerate(parts):
            moved = bind(f"{part.name_hint}_{space.name.lower()}", create_op_call("tile.move", [part],
                                                                                  dict(call.kwargs), span))
            value = create_op_call("tile.assemble", [whole, moved, [b * m, 0]], {}, span)
            whole = value if b == len(parts) - 1 else bind(f"{var.name_hint}_all", value)
        return out, whole

    def store(self, var, call: Call, args: list) -> list:
        """tile.store of a batched result: one flattened 2-D store per batch, chained through the tensor."""
        span, orig = call.span, call.args[0].type
        lead = [as_int(d) for d in orig.shape[:-2]]
        tensor, offsets = args[2], list(args[1].elements)
        base = getattr(tensor, "name_hint", "out")
        rank = len(offsets)
        out, parts = [], self.split[call.args[0]]
        for b, part in enumerate(parts):
            index, rest = [], b
            for d in reversed(lead):
                index.insert(0, rest % d)
                rest //= d
            index = [0] * (rank - len(orig.shape)) + index + [0, 0]
            offs = [_plus(o, i) for o, i in zip(offsets, index)]
            shapes = [1] * (rank - 2) + list(part.type.valid_shape)
            value = create_op_call("tile.store", [part, offs, tensor, shapes], {}, span)
            last = b == len(parts) - 1
            target = var if last else Var(f"{base}_b{b}", value.type, span)
            out.append((target, value))
            tensor = target if target is not None else tensor
        return out


def _operand_batch(b: int, out_batch: list, operand_type) -> int:
    """Which batch of an operand the product's batch `b` reads: numpy matmul broadcasting (the operand's
    batch dims align to the right; a missing or size-1 dim is read at index 0)."""
    own = [as_int(d) for d in operand_type.shape[:-2]]
    index, rest = [], b
    for d in reversed(out_batch):
        index.insert(0, rest % d)
        rest //= d
    index = index[len(index) - len(own):] if own else []
    linear = 0
    for i, d in zip(index, own):
        linear = linear * d + (0 if d == 1 else i)
    return linear


def split_loop(flattener, loop: ForStmt, split: dict) -> ForStmt:
    """A loop carrying batched accumulators: each carried batched value becomes one iter-arg (and one
    return var) per batch, so a K loop of tile.batch_matmul_acc accumulates every batch in its own Acc tile."""
    stmts = flatten_to_stmts(loop.body)
    if not stmts or not isinstance(stmts[-1], YieldStmt) or len(stmts[-1].values) != len(loop.iter_args):
        raise UnsupportedError("FlattenTileNdTo2D: a loop carrying a tile.batch_matmul result must end in its yield",
                               loop.span)
    iter_args, carried = [], []
    for ia in loop.iter_args:
        if ia.init_value in split:
            parts = [IterArg(f"{ia.name_hint}_b{b}", p.type, p, ia.span) for b, p in enumerate(split[ia.init_value])]
            split[ia] = parts
            iter_args += parts
            carried.append(True)
        else:
            iter_args.append(flattener.var(ia))
            carried.append(False)
    body = flattener.mutate(SeqStmts(stmts[:-1], loop.body.span))
    values = []
    for v, is_split in zip(stmts[-1].values, carried):
        if is_split != (v in split):
            raise UnsupportedError("FlattenTileNdTo2D: a loop carries a tile.batch_matmul result but yields a value "
                                   "that is not one (or the other way round)", loop.span,
                                   hint="accumulate with pl.tile.batch_matmul_acc on the carried value")
        values += split[v] if is_split else [flattener.mutate(v)]
    return_vars = []
    for rv, ia, is_split in zip(loop.return_vars, loop.iter_args, carried):
        if is_split:
            split[rv] = [Var(f"{rv.name_hint}_b{b}", p.type, rv.span) for b, p in enumerate(split[ia])]
            return_vars += split[rv]
        else:
            return_vars.append(flattener.var(rv))
    body = SeqStmts([*flatten_to_stmts(body), YieldStmt(values, stmts[-1].span)], loop.body.span)
    return loop.replace(start=flattener.mutate(loop.start), stop=flattener.mutate(loop.stop),
                        step=flattener.mutate(loop.step), iter_args=tuple(iter_args), body=body,
                        return_vars=tuple(return_vars))


def _plus(o, i: int):
    if i == 0:
        return o
    if as_int(o) is not None:
        return ConstInt(as_int(o) + i)
    return BinaryExpr("add", o, ConstInt(i, o.type.dtype))
