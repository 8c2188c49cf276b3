"""Dual AIV dispatch (a2a3, no split; seed 004 step 12, reference SplitVectorKernel): lane 1 replays
the handshakes on empty tiles. The lowered IR shows it: stores under `if lane == 0`, Vec loads
with valid extent × (1 - lane), and (dual_dispatch.replay_valid_shapes) every Vec tile type —
the pops included — with valid_shape × (1 - lane), i.e. [0, 0] on lane 1."""

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.ir.expr import BinaryExpr, ConstInt
from pypto.ir.stmt import IfStmt, flatten_to_stmts
from pypto.ir.types import TileType
from pypto.ir.visitor import collect
from pypto.passes import PassManager
from pypto.passes.analysis import calls_in
from pypto.passes.context import PassContext
from pypto.passes.expand_mixed_kernel.dual_dispatch import replay_valid_shapes
from pypto.runtime import RunConfig, run


@pl.program
class NoSplit:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
          c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a_mat: pl.Tile[[16, 32], pl.FP16, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        b_mat: pl.Tile[[32, 16], pl.FP16, pl.Mem.Mat] = pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        left: pl.Tile[[16, 32], pl.FP16, pl.Mem.Left] = pl.move(a_mat, target_memory=pl.Mem.Left)
        right: pl.Tile[[32, 16], pl.FP16, pl.Mem.Right] = pl.move(b_mat, target_memory=pl.Mem.Right)
        z: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.matmul(left, right)
        v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.move(z, target_memory=pl.Mem.Vec)
        x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(c, [0, 0], [16, 16])
        y: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.add(pl.exp(v), x)
        c = pl.store(y, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
             c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c = self.k(a, b, c)
        return c


def _eval(e, lane: int) -> int:
    if isinstance(e, ConstInt):
        return e.value
    if isinstance(e, BinaryExpr):
        lhs, rhs = _eval(e.lhs, lane), _eval(e.rhs, lane)
        return {"mul": lhs * rhs, "sub": lhs - rhs, "add": lhs + rhs}[e.op]
    return lane                                           # the lane Var


def test_lane_one_replays_on_empty_tiles_in_the_lowered_ir():
    with PassContext(PassContext.current().instruments, platform="a2a3"):
        program = PassManager().run(NoSplit, until="SplitVectorKernel")
        aiv = program.get_function("k_aiv")
        assert aiv.attrs.get("dual_aiv_dispatch") is True
        stmts = flatten_to_stmts(aiv.body)
        lane = stmts[0].var
        assert stmts[0].value.op.name == "tile.get_subblock_idx"
        # no stores on lane 1: every store sits under `if lane == 0`
        guarded = [s for s in stmts if isinstance(s, IfStmt) and calls_in(s.then_body)
                   and calls_in(s.then_body)[0].op.name == "tile.store"]
        assert guarded and not [c for s in stmts if not isinstance(s, IfStmt)
                                for c in calls_in(s) if c.op.name == "tile.store"]
        # SplitVectorKernel itself typed lane 1's replay tiles: valid rows x (1 - lane), whole columns
        assert replay_valid_shapes(aiv, lane) is aiv                               # already applied, idempotent
        tiles = [v.type for v in collect(aiv.body, lambda n: isinstance(n, ir.Var))
                 if isinstance(v.type, TileType)]
        pops = [c.type for c in calls_in(aiv.body) if c.op.name == "tile.tpop_from_aic"]
        assert pops and tiles
        for t in pops + tiles:
            assert [_eval(d, 0) for d in t.valid_shape] == [16, 16]
            assert [_eval(d, 1) for d in t.valid_shape] == [0, 16]
        text = ir.python_print(aiv)
        assert "pl.TileView(valid_shape=[16 * (1 - aiv_lane), 16])] = pl.tile.tpop_from_aic(split=0" in text
        lowered = program
        ir.assert_structural_equal(pl.parse(lowered.as_python()), lowered)     # prints and parses back
        PassManager().run(lowered, after="SplitVectorKernel")                    # memory passes accept it


def test_typed_replay_runs_numpy_equal_on_a2a3sim(monkeypatch):
    import pypto.passes.split_vector_kernel as svk
    original = svk._dual_dispatch
    typed_kernels = []

    def typed(func):
        out = original(func)
        typed_kernels.append(func.name)
        return replay_valid_shapes(out, flatten_to_stmts(out.body)[0].var)

    monkeypatch.setattr(svk, "_dual_dispatch", typed)
    rng = np.random.default_rng(9)
    a = rng.uniform(-1, 1, (16, 32)).astype(np.float16)
    b = rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    c = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    want = np.exp(a.astype(np.float32) @ b.astype(np.float32)) + c
    run(NoSplit, a, b, c, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-6)
    assert typed_kernels == ["k_aiv"]


def test_the_lowered_program_shows_lane_one_empty_on_pops_only_on_a2a3(tmp_path):
    """The final IR of a compiled no-split mixed kernel: on a2a3 the AIV's pop is typed 16 x (1 - lane)
    valid rows (lane 1 replays on an empty tile); a5 has no dual dispatch and keeps the full tile."""
    import re
    from tests.codegen.programs import MixedMatmulRelu
    for platform, scaled in (("a2a3sim", True), ("a5sim", False)):
        text = ir.python_print(ir.compile(MixedMatmulRelu, output_dir=tmp_path / platform, platform=platform).lowered)
        pops = [line for line in text.splitlines() if "pl.tile.tpop_from_aic(" in line]
        assert pops
        for line in pops:
            assert bool(re.search(r"valid_shape=\[16 \* \(1 - aiv_lane\), 128\]", line)) is scaled, line
