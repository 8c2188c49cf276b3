"""MX scale V2C carriers on a5 (seed 004, "MX scale 的 V2C 传输").

An FP8E8M0 scale moved from Vec to LeftScale / RightScale crosses the V2C pipe without the NZ
insert ordinary Left / Right data gets. The pipe carries it as a row/row box:

  * a logical row/row scale (A side, [M, K/32]) is pushed as it is;
  * a logical col/col scale (B side, [K/32, N]) is pushed through the zero-copy
    `tile.transpose_view`, i.e. as its physical row/row carrier [N, K/32];
  * when the producer's layout is not the one the consumer's move asks for, a real Vec → Vec
    `tile.move` to the consumer's layout comes first;
  * a partially valid scale sends its whole physical box: a private Vec copy is widened with
    `tile.set_validshape` (the producer's tile keeps its valid region); the cube's tile keeps the
    logical valid region and ignores the padding.
The cube pops the carrier box into Mat, moves it to LeftScale / RightScale and, for a col/col
consumer, views it back (`tile.transpose_view`) as the logical [K/32, N] col/col tile the MX
matmul reads; the slot is freed after the move (the view is zero-copy).

    AIV:  carrier = tile.transpose_view(sb)            # [2, 32] col/col → [32, 2] row/row
          tpush_to_aic(carrier)
    AIC:  sb_mat = tpop_from_aiv()                     # [32, 2] row/row, Mat
          sb_box = tile.move(sb_mat, RightScale);  sb = tile.transpose_view(sb_box)   # [2, 32] col/col
"""

from __future__ import annotations

from pypto.ir.dtypes import FP8E8M0
from pypto.ir.enums import MemorySpace, TileLayout
from pypto.ir.expr import Var
from pypto.ir.ops.common import is_full
from pypto.ir.ops.registry import create_op_call
from pypto.ir.stmt import AssignStmt, EvalStmt
from pypto.ir.types import TileType, TileView

SCALE_SPACES = (MemorySpace.LeftScale, MemorySpace.RightScale)
_COL = (TileLayout.col_major, TileLayout.col_major)


def is_mx_scale_boundary(src: Var, target) -> bool:
    return target in SCALE_SPACES and isinstance(src.type, TileType) and src.type.dtype is FP8E8M0


def _layout(t: TileType) -> tuple:
    view = t.tile_view or TileView()
    return view.blayout, view.slayout


def _call(name, args, kwargs, span):
    return create_op_call(name, list(args), kwargs, span)


def vector_side(src: Var, dst: Var, target, span) -> list:
    """The AIV statements: [layout move], [transpose_view], tpush_to_aic(carrier)."""
    out = []
    pushed = src
    want = _layout(dst.type)
    if not is_full(src.type.shape, src.type.valid_shape):
        # the whole physical box crosses (a contiguous, 32-byte aligned insert): a private Vec copy
        # gets the widened valid region, so the producer's own tile and its views keep their metadata
        copy = _call("tile.move", [src], {"target_memory": MemorySpace.Vec, "blayout": want[0],
                                          "slayout": want[1]}, span)
        private = Var(f"{src.name_hint}_private", copy.type, span)
        out.append(AssignStmt(private, copy, span))
        rows, cols = src.type.shape
        widened = _call("tile.set_validshape", [private, rows, cols], {}, span)
        pushed = Var(f"{src.name_hint}_box", widened.type, span)
        out.append(AssignStmt(pushed, widened, span))
    elif _layout(src.type) != want:
        moved = _call("tile.move", [src], {"target_memory": MemorySpace.Vec, "blayout": want[0], "slayout": want[1]},
                      span)
        pushed = Var(f"{src.name_hint}_{'col' if want == _COL else 'row'}", moved.type, span)
        out.append(AssignStmt(pushed, moved, span))
    if want == _COL:
        view = _call("tile.transpose_view", [pushed], {}, span)
        carrier = Var(f"{src.name_hint}_carrier", view.type, span)
        out.append(AssignStmt(carrier, view, span))
        pushed = carrier
    out.append(EvalStmt(_call("tile.tpush_to_aic", [pushed], {"split": 0}, span), span))
    return out


def cube_side(dst: Var, target, span, carriers: dict) -> list:
    """The AIC statements: pop the carrier box into Mat, move it to the scale buffer, view it back."""
    logical = dst.type
    col = _layout(logical) == _COL
    if col:
        box = _call("tile.transpose_view", [Var("logical", logical.replace(memory_space=MemorySpace.Mat), span)],
                    {}, span).type
    else:
        box = logical.replace(memory_space=MemorySpace.Mat)
    mat = Var(f"{dst.name_hint}_mat", box, span)
    pop = AssignStmt(mat, _call("tile.tpop_from_aiv", [], {"split": 0}, span).replace(type=box), span)
    blayout, slayout = _layout(box)
    moved = _call("tile.move", [mat], {"target_memory": target, "blayout": blayout, "slayout": slayout}, span)
    if not col:
        carriers[mat] = dst
        return [pop, AssignStmt(dst, moved.replace(type=logical), span)]
    in_scale = Var(f"{dst.name_hint}_box", moved.type, span)
    carriers[mat] = in_scale
    view = _call("tile.transpose_view", [in_scale], {}, span)
    return [pop, AssignStmt(in_scale, moved, span), AssignStmt(dst, view.replace(type=logical), span)]
