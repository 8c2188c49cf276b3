"""Build one core side's body of a mixed kernel (seed 004, Algorithm phase 2 steps 4–5a).

The cube body keeps CUBE + SHARED statements, the vector body VECTOR + SHARED ones; compound
statements are copied to both sides and pruned recursively. Each boundary move becomes the
transfer pair of its direction:

    C2V  acc → Vec:   AIC  tpush_to_aiv(acc)                 AIV  z_vec = tpop_from_aic()
    V2C  x → Left:    AIV  [x_nz = move(x, NZ) on a5] tpush_to_aic(x_nz)
                      AIC  x_mat = tpop_from_aiv() (Mat, NZ); x_left = move(x_mat, Left)
    V2C  MX scale → LeftScale / RightScale (a5): a row/row carrier, see mx_carrier.py

    V2C  a Vec constant fill (tile.full / tile.create) → a cube space: no transfer, the cube side
                      re-creates the fill typed for its space (a loop's missing init value, step 6)

A loop or branch only the other side works in is left out whole (its tensor versions are then
repointed by versions.py).
"""

from __future__ import annotations

from pypto.errors import UnsupportedError
from pypto.ir.enums import SplitMode, MemorySpace, TileLayout
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.ops.registry import CUBE, MIXED, SHARED, VECTOR, create_op_call
from pypto.ir.stmt import (AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, SeqStmts, WhileStmt, YieldStmt,
                           child_bodies, flatten_to_stmts)
from pypto.ir.types import TensorType, TileType, TileView
from pypto.passes.expand_mixed_kernel import mx_carrier
from pypto.passes.expand_mixed_kernel.affinity import C2V, boundary_direction, stmt_affinity, stmt_call
from pypto.passes.expand_mixed_kernel.dce import any_effects

NZ = (TileLayout.col_major, TileLayout.row_major)


def transfer_view(t: TileType, platform_name: str) -> TileType:
    """The cross-core TileView of a boundary tile: NZ towards Left / Right, the original layout otherwise."""
    if t.memory_space in (MemorySpace.Left, MemorySpace.Right):
        view = t.effective_view.replace(blayout=NZ[0], slayout=NZ[1], fractal=512)
        return t.replace(tile_view=view)
    return t


def _layout(t: TileType) -> tuple:
    v = t.effective_view
    return v.blayout, v.slayout


def _push_layout(src: TileType, dst: TileType, target):
    """The (blayout, slayout) an a5 V→C push must carry when the Vec source is not already in it, else None."""
    if target in (MemorySpace.Left, MemorySpace.Right):
        wanted = NZ
    elif target is MemorySpace.Mat:
        wanted = _layout(dst)
    else:
        return None
    return wanted if wanted != _layout(src) else None


def _shard_transport(c, full: TileType) -> dict:
    """The kwargs of the transfer pair a boundary becomes (seed 004, step 4a / "split code"): a
    tile.aiv_shard's / tile.aic_gather's authored mode (1 / 2) becomes the pto-isa code of its full-width
    tile's lane extents (the shard's operand, the gather's result), with the op's lane_stride riding
    along; a plain move transfers whole (split 0)."""
    mode = c.kwargs.get("split")
    if c.op.name not in ("tile.aiv_shard", "tile.aic_gather") or mode is None \
            or int(getattr(mode, "value", mode)) == 0:
        return {"split": 0}
    from pypto.passes.expand_mixed_kernel.split_code import transfer_code
    stride = c.kwargs.get("lane_stride")
    code = transfer_code(full, SplitMode(int(getattr(mode, "value", mode))), gather=c.op.name == "tile.aic_gather",
                         span=c.span, stride=stride)
    return {"split": code, "lane_stride": stride} if stride is not None else {"split": code}


def op_call(name: str, args=(), kwargs=None, span=None, type=None) -> Call:
    c = create_op_call(name, list(args), kwargs or {}, span)
    return c.replace(type=type) if type is not None else c


class SideBuilder:
    """Prunes a kernel body to one side; `other_defs` collects what the other side defines."""

    def __init__(self, side: str, platform_name: str, fences: tuple = ({}, {}), fills: dict = None):
        self.side = side
        self.platform_name = platform_name
        self.fills = fills or {}           # Var → its tile.full / tile.create call (no data to transfer)
        self.carriers: dict = {}           # popped Mat tile → the same-side move results that carry it on
        self.push_after, self.pop_before = fences   # GM fences (gm_fence.plan_fences)

    def body(self, stmt) -> SeqStmts:
        out = []
        for s in flatten_to_stmts(stmt):
            if self.side == VECTOR:
                for token_type in self.pop_before.get(id(s), ()):
                    tok = Var("gm_fence", token_type, s.span)
                    out.append(AssignStmt(tok, op_call("tile.tpop_from_aic", [], {"split": 0}, s.span, token_type),
                                          s.span))
                    out.append(EvalStmt(op_call("system.tfree_to_aic", [tok], {"split": 0}, s.span), s.span))
            out.extend(self.stmt(s))
            if self.side == CUBE and id(s) in self.push_after:
                out.append(EvalStmt(op_call("tile.tpush_to_aiv", [self.push_after[id(s)]], {"split": 0}, s.span),
                                    s.span))
        return SeqStmts(out, getattr(stmt, "span", None))

    def stmt(self, s) -> list:
        c = stmt_call(s)
        if c is not None:
            direction = boundary_direction(c)
            if direction is not None:
                return self.boundary(s, c, direction)
            aff = stmt_affinity(s)
            return [s] if aff in (SHARED, self.side) else []
        if isinstance(s, (ForStmt, WhileStmt)):
            return self._compound(s, s.replace(body=self.body(s.body)))
        if isinstance(s, IfStmt):
            else_body = self.body(s.else_body) if s.else_body is not None else None
            return self._compound(s, s.replace(then_body=self.body(s.then_body), else_body=else_body))
        if isinstance(s, ReturnStmt):
            return [s] if self.side == VECTOR else []
        if isinstance(s, (YieldStmt, SeqStmts)):
            return [s] if isinstance(s, YieldStmt) else [self.body(s)]
        return [s]

    def _compound(self, original, pruned) -> list:
        """A loop or branch that only the other side works in is left out whole when nothing of it
        matters here (no effect; no scalar result): the tensor versions it yields are then the other
        side's, and versions.py repoints their readers to this side's nearest one."""
        other = VECTOR if self.side == CUBE else CUBE
        if stmt_affinity(original) == other and not any_effects([pruned]) \
                and all(isinstance(rv.type, (TensorType, TileType)) for rv in original.return_vars):
            return []
        return [pruned]

    def boundary(self, s, c: Call, direction: str) -> list:
        if not isinstance(s, AssignStmt):
            raise UnsupportedError(f"ExpandMixedKernel: a cross-core {c.op.name} must bind its result", c.span)
        src, dst = c.args[0], s.var
        if direction == C2V:
            kw = _shard_transport(c, src.type)
            if self.side == CUBE:
                return [EvalStmt(op_call("tile.tpush_to_aiv", [src], kw, c.span), c.span)]
            return [AssignStmt(dst, op_call("tile.tpop_from_aic", [], kw, c.span, dst.type), c.span)]
        target = c.kwargs.get("target_memory", dst.type.memory_space)     # aic_gather: its Mat result
        fill = self.fills.get(src)
        if fill is not None and c.op.name == "tile.move":
            # a constant fill (e.g. a loop's zero accumulator) carries no data: the cube side re-creates it
            # in the target space instead of popping it into Mat and moving Mat → Acc (no such path)
            return [AssignStmt(dst, fill.replace(type=dst.type), c.span)] if self.side == CUBE else []
        if self.platform_name == "a5" and mx_carrier.is_mx_scale_boundary(src, target):
            if self.side == VECTOR:
                return mx_carrier.vector_side(src, dst, target, c.span)
            return mx_carrier.cube_side(dst, target, c.span, self.carriers)
        cross = transfer_view(dst.type, self.platform_name)
        kw = _shard_transport(c, c.type)
        if self.side == VECTOR:
            out = []
            pushed = src
            layout = _push_layout(src.type, dst.type, target) if self.platform_name == "a5" else None
            if layout is not None:
                # a5 inserts the Vec tile into the cube's FIFO in the layout the pop expects: NZ towards
                # Left / Right, the layout the move spells towards Mat (seed 004, the a5 transfer table)
                view = src.type.effective_view.replace(blayout=layout[0], slayout=layout[1])
                nz_type = src.type.replace(tile_view=view)
                pushed = Var(f"{src.name_hint}_nz", nz_type, c.span)
                move = op_call("tile.move", [src], {"target_memory": MemorySpace.Vec, "blayout": layout[0],
                                                    "slayout": layout[1]}, c.span)
                out.append(AssignStmt(pushed, move.replace(type=nz_type), c.span))
            out.append(EvalStmt(op_call("tile.tpush_to_aic", [pushed], kw, c.span), c.span))
            return out
        if target is MemorySpace.Mat:
            return [AssignStmt(dst, op_call("tile.tpop_from_aiv", [], kw, c.span, dst.type), c.span)]
        mat_type = cross.replace(memory_space=MemorySpace.Mat)
        mat = Var(f"{dst.name_hint}_mat", mat_type, c.span)
        pop = AssignStmt(mat, op_call("tile.tpop_from_aiv", [], kw, c.span, mat_type), c.span)
        # the Mat → target move spells the target's layout (CreateMove forwards the result view's layouts)
        dst_view = dst.type.effective_view
        move = op_call("tile.move", [mat], {"target_memory": target, "blayout": dst_view.blayout,
                                            "slayout": dst_view.slayout}, c.span)
        self.carriers[mat] = dst
        return [pop, AssignStmt(dst, move.replace(type=dst.type), c.span)]


FILL_OPS = ("tile.full", "tile.create")


def fill_defs(stmt) -> dict:
    """Vars bound to a Vec constant fill (tile.full / tile.create) anywhere in the body → that call."""
    found: dict = {}

    def walk(s):
        for x in flatten_to_stmts(s):
            c = stmt_call(x)
            if isinstance(x, AssignStmt) and c is not None and not isinstance(c.op, GlobalVar) \
                    and c.op.name in FILL_OPS and isinstance(x.var.type, TileType) \
                    and x.var.type.memory_space is MemorySpace.Vec:
                found[x.var] = c
            for child in child_bodies(x):
                walk(child)
    walk(stmt)
    return found


def is_mixed(body) -> bool:
    sides = {stmt_affinity(s) for s in flatten_to_stmts(body)} - {SHARED}
    return MIXED in sides or sides == {CUBE, VECTOR}
