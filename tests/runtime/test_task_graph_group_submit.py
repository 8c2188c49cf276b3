"""Task launches on the simulators, end to end: a hand-written Group whose members are written as
`pl.submit` (one with `pl.no_dep` and `pl.adir` directions) runs after ABI normalization and matches
numpy; the member's `pl.no_dep` reaches the Group's launch (the race detector sees the edge it deleted);
a `pl.adir.no_dep` direction opts out like `pl.no_dep`; a submit that leaves its output to the runtime
gets a fresh buffer; `dumps=` marks change nothing a run computes."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.function import Program
from pypto.runtime import RunConfig
from pypto.runtime.sim.race_detector import DataRaceError
from tests.passes.expand_mixed_kernel.test_group_abi_sim import Handwritten

SIMS = pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
R, C = 16, 16


def _group_program(mark_no_dep: bool, read_after: bool):
    """Orchestration: Group g (cube: a @ b → pipe → vec: exp → out), then optionally a kernel reading out.
    The members are those of test_group_abi_sim.Handwritten; here they are declared by signature only."""

    @pl.program
    class Submitted:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16]):
            pass

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return out

        @pl.function(type=pl.FunctionType.AIV)
        def halve(self, src: pl.Tensor[[16, 16], pl.FP32],
                  dst: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(src, [0, 0], [16, 16])
            ret = pl.store(pl.mul(t, 0.5), [0, 0], dst)
            return ret

        @pl.function(type=pl.FunctionType.Group)
        def g(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            (_cube,) = pl.submit(self.cube, a, b)
            if mark_no_dep:
                r, _vec = pl.submit(self.vec, pl.no_dep(out), attrs={"arg_directions": [pl.adir.output_existing]})
            else:
                r, _vec = pl.submit(self.vec, out, attrs={"arg_directions": [pl.adir.output_existing]})
            return r

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 half: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            out = self.g(a, b, out)
            if read_after:
                half = self.halve(out, half)
            return half

    members = {name: Handwritten.functions[name] for name in ("cube", "vec")}
    return Program([members.get(f.name, f) for f in Submitted.functions.values()], "Submitted")


def _operands():
    rng = np.random.default_rng(7)
    a = rng.uniform(-0.5, 0.5, (16, 32)).astype(np.float16)
    b = rng.uniform(-0.5, 0.5, (32, 16)).astype(np.float16)
    return a, b, np.exp(a.astype(np.float32) @ b.astype(np.float32))


@SIMS
@pytest.mark.filterwarnings("ignore:output 'half' was never written")      # this variant has no reader
def test_a_group_of_submitted_members_runs_and_matches_numpy(platform):
    a, b, want = _operands()
    compiled = ir.compile(_group_program(mark_no_dep=True, read_after=False), platform=platform)
    for config in (RunConfig(platform=platform), RunConfig(platform=platform, sim_schedule="random", sim_seed=3)):
        out, half = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
        compiled(a, b, out, half, config=config)
        np.testing.assert_allclose(out, want, rtol=2e-3)


@SIMS
def test_a_members_no_dep_reaches_the_groups_launch(platform):
    a, b, want = _operands()
    tracked = ir.compile(_group_program(mark_no_dep=False, read_after=True), platform=platform)
    out, half = np.zeros((R, C), np.float32), np.zeros((R, C), np.float32)
    tracked(a, b, out, half, config=RunConfig(platform=platform, sim_schedule="random", sim_seed=1))
    np.testing.assert_allclose(half, want * 0.5, rtol=2e-3)
    opted_out = ir.compile(_group_program(mark_no_dep=True, read_after=True), platform=platform)
    with pytest.raises(DataRaceError, match="data race on buffer 'out'"):     # the edge g → halve is gone
        opted_out(a, b, np.zeros((R, C), np.float32), np.zeros((R, C), np.float32),
                  config=RunConfig(platform=platform))


def _orchestration_program(second_call: str):
    text = f'''
import pypto.language as pl

@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[{R}, {C}], pl.FP32],
              out: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        t: pl.Tile[[{R}, {C}], pl.FP32] = pl.load(x, [0, 0], [{R}, {C}])
        ret = pl.store(pl.add(t, t), [0, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{R}, {C}], pl.FP32],
             out: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]) -> pl.Tensor[[{R}, {C}], pl.FP32]:
        mid, made = pl.submit(self.twice, x, dumps=[x])
        {second_call}
        return out
'''
    return pl.parse(text)


@SIMS
def test_a_runtime_allocated_output_feeds_the_next_task(platform):
    x = np.random.default_rng(3).standard_normal((R, C), dtype=np.float32)
    compiled = ir.compile(_orchestration_program("out, _ = pl.submit(self.twice, mid, out, dumps=[mid, out])"),
                          platform=platform)
    out = np.zeros_like(x)
    compiled(x, out, config=RunConfig(platform=platform, sim_schedule="random", sim_seed=2))
    np.testing.assert_allclose(out, 4 * x, rtol=1e-6)


def test_an_adir_no_dep_direction_opts_the_argument_out():
    x = np.random.default_rng(4).standard_normal((R, C), dtype=np.float32)
    racy = ir.compile(_orchestration_program(
        'out = self.twice(mid, out, attrs={"arg_directions": [pl.adir.no_dep, pl.adir.output_existing]})'),
        platform="a2a3sim")
    with pytest.raises(DataRaceError, match="data race on buffer 'out'.*kernel twice"):  # mid: the first's out
        racy(x, np.zeros_like(x))


# ---------------------------------------------------------------------------- the guide's fragment forms, whole
ROWS, COLS, BLOCKS = 64, 32, 4


@pl.program
class Fanned:
    """`a, tid = pl.spmd_submit(self.k1, x, core_num=4)`: the launch's output is left to the runtime."""

    @pl.function(type=pl.FunctionType.InCore)
    def k1(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
           out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        b = pl.tile.get_block_idx()
        t: pl.Tile[[16, COLS], pl.FP32] = pl.load(x, [b * 16, 0], [16, COLS])
        ret = pl.store(pl.add(t, 3.0), [b * 16, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t: pl.Tile[[ROWS, COLS], pl.FP32] = pl.load(x, [0, 0], [ROWS, COLS])
        ret = pl.store(t, [0, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        a, tid = pl.spmd_submit(self.k1, x, core_num=4)
        res = pl.submit(self.copy, a, out, deps=[tid])
        out = res[0]
        return out


@SIMS
def test_an_spmd_submit_with_a_runtime_output_fans_out_and_feeds_the_next_task(platform):
    x = np.random.default_rng(5).standard_normal((ROWS, COLS), dtype=np.float32)
    compiled = ir.compile(Fanned, platform=platform)
    for seed in (1, 2):
        out = np.zeros_like(x)
        compiled(x, out, config=RunConfig(platform=platform, sim_schedule="random", sim_seed=seed))
        np.testing.assert_allclose(out, x + 3, rtol=1e-6)


@pl.jit
def _gated_spmd(x: pl.Tensor, count: pl.Tensor, gate: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather") as gathered:
        gate[:] = pl.add(count, count)
    with pl.spmd(BLOCKS, deps=[gathered], predicate=(gate[0, 0] > 0)) as work:
        b = pl.tile.get_block_idx()
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [b * 16, 0], [16, COLS])
            pl.store(pl.mul(t, 5.0), [b * 16, 0], out)
    return out


@SIMS
@pytest.mark.parametrize("count", [2, 0], ids=["runs", "skipped"])
@pytest.mark.filterwarnings("ignore:output .out. was never written")     # the skipped launch writes nothing
def test_an_spmd_region_waits_on_its_gate_and_reads_it_at_dispatch(platform, count):
    x = np.random.default_rng(6).standard_normal((ROWS, COLS), dtype=np.float32)
    counts = np.full((1, 8), count, np.int32)
    out = np.full_like(x, -1.0)
    _gated_spmd(x, counts, np.zeros((1, 8), np.int32), out,
                config=RunConfig(platform=platform, sim_schedule="random", sim_seed=4))
    np.testing.assert_allclose(out, 5 * x if count else np.full_like(x, -1.0), rtol=1e-6)
