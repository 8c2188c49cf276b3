"""Which core (and lane) a statement lands on (seed 004, step 12 and 亲和性分类):

- a2a3: ExpandMixedKernel marks every AIV without a split mode that drives a pipe — a split half or a
  hand-written Group member — dual_aiv_dispatch; SplitVectorKernel lowers only the marked ones;
- an explicit sync's core_type sends it to that one core kind;
- a tile.aic_gather result is the Mat tile the gather makes, its transfer pair the gather's split code.
"""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.stmt import flatten_to_stmts
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.pypto_core import passes
from pypto.runtime import RunConfig


def _expand(program, platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.infer_tile_memory_space()(passes.convert_to_ssa()(program)))


def _ops(func) -> list:
    return [c.op.name for c in calls_in(func.body) if getattr(c.op, "name", "").startswith(("system.", "tile."))]


@pl.program
class WrittenPipes:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v = pl.system.import_peer_buffer(name="w_c2v", peer_func="vec")
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024)
        t = pl.tile.load(q, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        pl.tile.tpush_to_aiv(pl.matmul(pl.move(t, target_memory=pl.Mem.Left), pl.move(t, target_memory=pl.Mem.Right)),
                             split=0)
        return sink

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v = pl.system.reserve_buffer(name="w_c2v", size=2048)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024)
        got: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)
        out = pl.store(got, [0, 0], out)
        pl.system.tfree_to_aic(got)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def both(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(q, sink)
        return self.vec(out)


@pytest.mark.parametrize("platform, dual", [("a2a3", True), ("a5", None)])
def test_a_hand_written_pipe_member_is_dual_dispatched_on_a2a3_only(platform, dual):
    after = _expand(WrittenPipes, platform)
    assert after.get_function("vec").attrs.get("dual_aiv_dispatch") is dual
    assert after.get_function("cube").attrs.get("dual_aiv_dispatch") is None


@pl.program
class SplitKernel:
    @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN})
    def k(self, a: pl.Tensor[[16, 16], pl.FP16], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        m = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        z = pl.matmul(pl.move(m, target_memory=pl.Mem.Left), pl.move(m, target_memory=pl.Mem.Right))
        v = pl.move(z, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major, slayout=pl.TileLayout.none_box)
        out = pl.store(v, [0, 0], out)
        return out


def test_a_kernel_with_a_split_mode_is_not_marked():
    assert _expand(SplitKernel, "a2a3").get_function("k_aiv").attrs.get("dual_aiv_dispatch") is None


def test_split_vector_kernel_lowers_only_marked_kernels():
    with PassContext(PassContext.current().instruments, platform="a2a3"):
        marked = _expand(WrittenPipes, "a2a3")
        unmarked = marked.with_functions([f.replace(attrs={}) if f.name == "vec" else f
                                          for f in marked.functions.values()])
        lowered = passes.split_vector_kernel()(marked).get_function("vec")
        assert _ops(lowered)[0] == "tile.get_subblock_idx"          # lane 1 replays the handshake
        untouched = passes.split_vector_kernel()(unmarked).get_function("vec")
        assert "tile.get_subblock_idx" not in _ops(untouched)
        again = passes.split_vector_kernel()(passes.split_vector_kernel()(marked)).get_function("vec")
        assert _ops(again).count("tile.get_subblock_idx") == 1     # lowering twice changes nothing


@pl.program
class ExplicitEvents:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, ws: pl.Tensor[[256], pl.INT64], x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        pl.system.set_ffts(ws)
        pl.system.sync_set(2, pipe=pl.PipeType.MTE3, ffts_mode=2, core_type="aiv")
        pl.system.sync_wait(2, pipe=pl.PipeType.MTE2, core_type="aic")
        return x


def test_an_explicit_sync_core_type_routes_the_event_to_one_core_kind():
    after = _expand(ExplicitEvents, "a2a3")
    aic, aiv = after.get_function("k_aic"), after.get_function("k_aiv")
    assert _ops(aic) == ["system.set_ffts", "system.sync_wait"]
    assert _ops(aiv) == ["system.set_ffts", "system.sync_set"]


@pl.jit
def handed_over_through_gm(x: pl.Tensor, w: pl.Tensor, stage: pl.InOut[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        xv = pl.load(x, [0, 0], [16, 32])
        pl.store(pl.add(xv, xv), [0, 0], stage)                         # the vector core writes GM ...
        pl.system.sync_set(5, pipe=pl.PipeType.MTE3, core_type="aiv")   # ... raises the event once ...
        pl.system.sync_wait(5, pipe=pl.PipeType.MTE3, core_type="aic")  # ... and only the cube awaits it
        left = pl.move(pl.load(stage, [0, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        right = pl.move(pl.load(w, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        z = pl.matmul(left, right)
        pl.store(pl.move(z, target_memory=pl.Mem.Vec, blayout=pl.TileLayout.row_major,
                         slayout=pl.TileLayout.none_box), [0, 0], y)
    return y


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_an_event_raised_by_the_vector_core_releases_the_cube_numpy_equal(platform):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    w = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    stage = np.zeros((16, 32), np.float16)
    y = np.full((16, 16), np.nan, np.float32)
    handed_over_through_gm(x, w, stage, y, config=RunConfig(platform=platform))
    np.testing.assert_allclose(y, (2 * x).astype(np.float32) @ w.astype(np.float32), rtol=1e-2, atol=1e-2)


def _gather_kernel() -> ir.Program:
    """half [64, 128] Vec --aic_gather(UP_DOWN)--> full [128, 128] (bound to a Var typed Vec),
    full → Left, matmul, back to Vec, store: built from IR nodes, as a lowered split region leaves it."""
    from pypto.ir.dtypes import FP32
    from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection, SplitMode
    from pypto.ir.expr import Var
    from pypto.ir.function import Function, Program
    from pypto.ir.ops.registry import create_op_call
    from pypto.ir.stmt import AssignStmt, ReturnStmt, SeqStmts
    from pypto.ir.types import TensorType, TileType

    def var(name, call, space=None):
        t = call.type if space is None else call.type.replace(memory_space=space)
        return Var(name, t), call

    a = Var("a", TileType((64, 128), FP32, memory_space=MemorySpace.Vec))
    b = Var("b", TileType((128, 128), FP32, memory_space=MemorySpace.Right))
    out = Var("out", TensorType((128, 128), FP32))
    half, add = var("half", create_op_call("tile.add", [a, a], {}))
    full, gather = var("full", create_op_call("tile.aic_gather", [half], {"split": 1}), MemorySpace.Vec)
    left, move = var("left", create_op_call("tile.move", [full], {"target_memory": MemorySpace.Left}))
    z, mm = var("z", create_op_call("tile.matmul", [left, b], {}))
    zv, back = var("zv", create_op_call("tile.move", [z], {"target_memory": MemorySpace.Vec,
                                                           "blayout": pl.TileLayout.row_major,
                                                           "slayout": pl.TileLayout.none_box}))
    stored, store = var("stored", create_op_call("tile.store", [zv, [0, 0], out], {}))
    body = SeqStmts([AssignStmt(half, add), AssignStmt(full, gather), AssignStmt(left, move), AssignStmt(z, mm),
                     AssignStmt(zv, back), AssignStmt(stored, store), ReturnStmt([stored])])
    func = Function("g", [a, b, out], [out.type], body, FunctionType.InCore,
                    param_directions=[ParamDirection.In, ParamDirection.In, ParamDirection.Out],
                    attrs={"split": SplitMode.UP_DOWN, "split_aiv": True})
    return Program([func])


def test_a_gather_folds_into_the_vector_to_cube_boundary_with_its_split_code():
    with PassContext(PassContext.current().instruments, platform="a5"):
        after = passes.expand_mixed_kernel()(_gather_kernel())
    aic = flatten_to_stmts(after.get_function("g_aic").body)
    pop = next(s for s in aic if getattr(s, "value", None) is not None and s.value.op.name == "tile.tpop_from_aiv")
    assert pop.var.type.memory_space is pl.Mem.Mat and pop.value.kwargs["split"] == 1    # UP_DOWN, even halves
    move = next(s for s in aic if getattr(s, "value", None) is not None and s.value.op.name == "tile.move")
    assert move.value.args[0] is pop.var                   # the Mat → Left move stays on the cube, no 2nd pipe
    aiv = after.get_function("g_aiv")
    pushes = [c for c in calls_in(aiv.body) if c.op.name == "tile.tpush_to_aic"]
    assert [c.kwargs["split"] for c in pushes] == [1]
    assert pushes[0].args[0].type.shape[0].value == 64    # each lane pushes its half
