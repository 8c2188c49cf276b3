"""A TileType stores no view when its view is the one its memory space implies (as the reference does).

Mat / Left are NZ (col_major blocks of row_major boxes), Right is row_major blocks of col_major
boxes, Acc is NZ with the 1024-byte fractal, every other space the plain row-major TileView().
A tile.move into a cube space takes that space's layout; a move into Vec keeps the source's.
"""

from pypto.ir import MemorySpace
from pypto.ir.dtypes import BF16, FP32
from pypto.ir.enums import TileLayout
from pypto.ir.equality import structural_equal
from pypto.ir.expr import Var
from pypto.ir.ops.registry import create_op_call
from pypto.ir.types import TileType, TileView, implicit_tile_view

COL, ROW, NONE = TileLayout.col_major, TileLayout.row_major, TileLayout.none_box
NZ = TileView(blayout=COL, slayout=ROW)


def _tile(space, view=None, shape=(16, 32), dtype=BF16, name="t"):
    return Var(name, TileType(shape, dtype, tile_view=view, memory_space=space))


def test_the_implicit_view_of_each_space():
    assert (implicit_tile_view(MemorySpace.Mat).blayout, implicit_tile_view(MemorySpace.Mat).slayout) == (COL, ROW)
    assert (implicit_tile_view(MemorySpace.Right).blayout, implicit_tile_view(MemorySpace.Right).slayout) == (ROW, COL)
    assert implicit_tile_view(MemorySpace.Acc).fractal == 1024
    assert implicit_tile_view(MemorySpace.Vec).is_default() and implicit_tile_view(None).is_default()


def test_a_view_equal_to_the_implicit_one_is_stored_as_none():
    assert TileType((16, 32), BF16, tile_view=NZ, memory_space=MemorySpace.Mat).tile_view is None
    assert structural_equal(TileType((16, 32), BF16, tile_view=NZ, memory_space=MemorySpace.Mat),
                            TileType((16, 32), BF16, memory_space=MemorySpace.Mat))
    # the same NZ view is a real choice in Vec, and the plain view a real choice in Mat
    assert structural_equal(TileType((16, 32), BF16, tile_view=NZ, memory_space=MemorySpace.Vec).tile_view, NZ)
    nd_mat = TileType((16, 32), BF16, tile_view=TileView(), memory_space=MemorySpace.Mat)
    assert (nd_mat.tile_view.blayout, nd_mat.tile_view.slayout) == (ROW, NONE)


def test_replace_re_canonicalizes_against_the_new_space():
    vec_nz = TileType((16, 32), BF16, tile_view=NZ, memory_space=MemorySpace.Vec)
    assert vec_nz.replace(memory_space=MemorySpace.Mat).tile_view is None
    mat = TileType((16, 32), BF16, memory_space=MemorySpace.Mat)
    assert mat.effective_view.blayout is COL
    assert mat.with_valid_shape((1, 32)).effective_view.blayout is COL     # valid_shape keeps the NZ layout


def test_a_move_into_a_cube_space_takes_its_layout_a_move_into_vec_keeps_the_source():
    left = create_op_call("tile.move", [_tile(MemorySpace.Vec)], {"target_memory": MemorySpace.Left}).type
    assert left.tile_view is None and left.effective_view.blayout is COL
    right = create_op_call("tile.move", [_tile(MemorySpace.Mat)], {"target_memory": MemorySpace.Right}).type
    assert (right.effective_view.blayout, right.effective_view.slayout) == (ROW, COL)
    acc = _tile(MemorySpace.Acc, dtype=FP32)
    vec = create_op_call("tile.move", [acc], {"target_memory": MemorySpace.Vec}).type
    assert (vec.effective_view.blayout, vec.effective_view.slayout, vec.effective_view.fractal) == (COL, ROW, 512)
    flat = create_op_call("tile.move", [acc], {"target_memory": MemorySpace.Vec, "blayout": ROW,
                                              "slayout": NONE}).type
    assert flat.tile_view is None


def test_transpose_view_of_an_nz_mat_tile_is_zn():
    kt = create_op_call("tile.transpose_view", [_tile(MemorySpace.Mat)]).type
    assert (kt.tile_view.blayout, kt.tile_view.slayout) == (ROW, COL)
