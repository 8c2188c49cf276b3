"""The simulator's memory is real: tiles live at their assigned addresses (two live tiles forced
onto one address corrupt each other), every launch starts from poison, strict mode names the op
and line that reads never-written bytes, and each backend's data paths are enforced."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import SimulationError
from pypto.ir.platform import get_platform
from pypto.ir.visitor import IRMutator
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program
from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.sim.data_paths import check_data_paths


@pl.program
class AddTwo:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [32, 32])
            b = pl.load(y, [0, 0], [32, 32])
            out = pl.store(pl.add(a, b), [0, 0], out)
        return out


class _MoveAlloc(IRMutator):
    """Give the tile.alloc named `name` the address `addr` (what a broken planner would do)."""

    def __init__(self, name: str, addr: int):
        self.name, self.addr = name, addr

    def mutate_assign_stmt(self, s):
        v = s.value
        if isinstance(v, ir.Call) and not v.is_function_call() and v.op.name == "tile.alloc" \
                and s.var.name_hint == self.name:
            return s.replace(value=v.replace(kwargs=dict(v.kwargs, addr=self.addr)))
        return self.mutate_children(s)


def _inputs():
    rng = np.random.default_rng(11)
    return rng.standard_normal((32, 32), dtype=np.float32), rng.standard_normal((32, 32), dtype=np.float32)


def test_two_live_tiles_forced_onto_one_address_give_a_wrong_result():
    x, y = _inputs()
    compiled = compile_program(AddTwo)
    kernel = compiled.lowered["main_incore_0"]
    allocs = [s for s in ir.verifier.defined_vars(kernel.body) if s.name_hint.startswith("mem_vec")]
    assert len(allocs) == 2                    # a and b live together; the sum takes over a's bytes
    out = np.zeros_like(x)
    compiled(x, y, out)
    np.testing.assert_allclose(out, x + y, rtol=1e-6)
    moved = kernel.replace(body=_MoveAlloc("mem_vec_1", 0).mutate(kernel.body))
    broken = compiled.lowered.with_functions([moved if f is kernel else f for f in compiled.lowered.functions.values()])
    out = np.zeros_like(x)
    CompiledProgram(AddTwo, broken, platform="a2a3sim")(x, y, out)
    assert not np.allclose(out, x + y)
    np.testing.assert_allclose(out, y + y, rtol=1e-6)     # b's load overwrote a in the shared bytes


@pl.program
class ReadsUnwritten:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [16, 16])
            junk = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            out = pl.store(pl.add(a, junk), [0, 0], out)
        return out


@pl.program
class TwoTasks:
    """`second`'s scratch tile sits at the address where `first` left q (the same AIV core runs both)."""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], mid: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            p = pl.load(x, [0, 0], [16, 16])
            q = pl.load(x, [0, 0], [16, 16])
            mid = pl.store(pl.add(p, q), [0, 0], mid)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
            a = pl.load(mid, [0, 0], [16, 16])
            junk = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            out = pl.store(pl.add(junk, a), [0, 0], out)
        return out


def test_every_launch_starts_from_poison_not_from_the_last_tasks_data(monkeypatch):
    x = np.ones((16, 16), np.float32)
    out = np.zeros_like(x)
    run(TwoTasks, x, np.zeros_like(x), out, config=RunConfig())
    assert np.isnan(out).all()
    # without the launch poison the scratch tile would silently hold the first task's q
    import pypto.runtime.sim.contexts as contexts
    monkeypatch.setattr(contexts, "poison_fresh", lambda core, code: None)
    run(TwoTasks, x, np.zeros_like(x), out, config=RunConfig())
    np.testing.assert_array_equal(out, np.full_like(x, 3.0))


@pl.program
class RuntimePlacedSecond:
    """`second` places every tile at run time (slot index `i % 2`); its scratch slot 0 is where `first` left p."""
    @pl.function(type=pl.FunctionType.InCore)
    def first(self, x: pl.Tensor[[16, 16], pl.FP32],
              mid: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        p: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
        q: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
        mid2: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.add(p, q), [0, 0], mid)
        return mid2

    @pl.function(type=pl.FunctionType.InCore)
    def second(self, mid: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        for i in pl.range(0, 1):
            junk: pl.Tile[[16, 16], pl.FP32, pl.MemRef("buf", slots=4)[i % 4], pl.Mem.Vec] = pl.create_tile(
                [16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            a: pl.Tile[[16, 16], pl.FP32, pl.MemRef("buf", slots=4)[(i + 1) % 4], pl.Mem.Vec] = pl.load(mid, [0, 0], [16, 16])
            s: pl.Tile[[16, 16], pl.FP32, pl.MemRef("buf", slots=4)[(i + 2) % 4], pl.Mem.Vec] = pl.add(junk, a)
            out = pl.store(s, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], mid: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        mid = self.first(x, mid)
        out = self.second(mid, out)
        return out

def test_a_kernel_with_only_run_time_placed_tiles_still_starts_from_poison(monkeypatch):
    x = np.ones((16, 16), np.float32)
    out = np.zeros_like(x)
    run(RuntimePlacedSecond, x, np.zeros_like(x), out, config=RunConfig())
    assert np.isnan(out).all()
    import pypto.runtime.sim.contexts as contexts
    monkeypatch.setattr(contexts, "poison_fresh", lambda core, code: None)
    run(RuntimePlacedSecond, x, np.zeros_like(x), out, config=RunConfig())
    np.testing.assert_array_equal(out, np.full_like(x, 4.0))     # junk held first's p + q


def test_strict_memory_mode_names_the_op_and_line_that_reads_unwritten_bytes():
    x = np.ones((16, 16), np.float32)
    with pytest.raises(SimulationError) as info:
        run(ReadsUnwritten, x, np.zeros_like(x), config=RunConfig(sim_strict_memory=True))
    text = str(info.value)
    assert "tile.add reads its operand 'rhs'" in text and "no op has written" in text
    assert "test_sim_memory.py" in text               # the user's source line of the add


def test_strict_memory_mode_accepts_scratch_tiles_and_first_iteration_accumulators():
    from tests.passes.auto_tile_matmul_l0.test_auto_tile_matmul_l0 import TensorMatmul   # K loop: matmul_acc(.., ko == 0)
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((2, 256, 256), dtype=np.float32)
    c = np.zeros((256, 256), np.float32)
    run(TensorMatmul, a, b, c, config=RunConfig(platform="a5sim", sim_strict_memory=True))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    import runpy
    import pathlib
    mod = runpy.run_path(str(pathlib.Path(__file__).parents[2] / "examples" / "intermediate" / "01_softmax.py"))
    x = rng.standard_normal((mod["M"], mod["N"]), dtype=np.float32)
    y = np.zeros_like(x)
    mod["row_softmax"](x, y, config=RunConfig(sim_strict_memory=True))     # row_max / row_sum scratch
    np.testing.assert_allclose(y, mod["reference"](x), rtol=1e-5, atol=1e-6)


ACC_TO_VEC = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        l: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
        r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
        c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
        v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.move(c, target_memory=pl.Mem.Vec)
"""

ACC_STORE_INT8 = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIC)
    def k(self, out: pl.Out[pl.Tensor[[16, 16], pl.INT8]]):
        c: pl.Tile[[16, 16], pl.INT8, pl.Mem.Acc] = pl.tile.create([16, 16], dtype=pl.INT8, target_memory=pl.Mem.Acc)
        out2: pl.Tensor[[16, 16], pl.INT8] = pl.store(c, [0, 0], out)
"""


def test_acc_to_vec_move_exists_on_a5_only():
    kernel = pl.parse(ACC_TO_VEC)["k"]
    check_data_paths(kernel, get_platform("a5"))
    with pytest.raises(SimulationError, match="a2a3 has no Acc → Vec data path"):
        check_data_paths(kernel, get_platform("a2a3"))


@pytest.mark.parametrize("platform", ["a2a3", "a5"])
def test_acc_tiles_store_only_in_fixpipe_formats(platform):
    with pytest.raises(SimulationError, match="stores Acc only as INT32 / FP32 / FP16 / BF16"):
        check_data_paths(pl.parse(ACC_STORE_INT8)["k"], get_platform(platform))
