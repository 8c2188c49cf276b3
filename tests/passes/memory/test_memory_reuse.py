"""MemoryReuse and the capacity check: lifetimes decide sharing, unsafe hand-overs are refused,
the softmax example's peak UB drops (report/memory.txt shows before / after), and a kernel
too big for a2a3's 184 KiB UB fails to compile there but runs on a5 once reuse shrinks it."""

import pathlib
import runpy

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CapacityError
from pypto.ir.enums import MemorySpace
from pypto.ir.visitor import collect
from pypto.passes import PassContext, PassManager
from pypto.passes.memory.memory_reuse import peak_before_reuse
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program

EXAMPLES = pathlib.Path(__file__).parents[3] / "examples"


def _lower(program, platform="a2a3", without=()):
    with PassContext(platform=platform):
        return PassManager().run(program, skip=without)


def _bases(func) -> dict:
    """name of each tile var → name of its buffer's base."""
    return {v.name_hint: v.type.memref.base.name_hint for v in ir.verifier.defined_vars(func.body)
            if isinstance(v.type, ir.TileType) and v.type.memref is not None}


def _vec_top(func) -> int:
    allocs = [c for c in collect(func.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                                 and n.op.name == "tile.alloc") if c.kwargs["memory_space"] is MemorySpace.Vec]
    return max(c.kwargs["addr"] + c.kwargs["size"] for c in allocs)


def _softmax_program():
    mod = runpy.run_path(str(EXAMPLES / "intermediate" / "01_softmax.py"))
    x = np.zeros((mod["M"], mod["N"]), np.float32)
    return mod["row_softmax"], (x, np.zeros_like(x))


def test_softmax_example_peak_ub_drops_and_the_report_prints_before_and_after(tmp_path):
    jit_fn, args = _softmax_program()
    compiled = jit_fn.compile(*args, config=RunConfig(save_kernels_dir=str(tmp_path)))
    (kernel,) = [f for f in compiled.lowered.functions.values() if f.func_type is pl.FunctionType.AIV]
    before, after = peak_before_reuse(kernel)[MemorySpace.Vec], _vec_top(kernel)
    assert after < before // 2            # 7 tile buffers (82432 B) → 3 (33024 B)
    report = (tmp_path / "report" / "memory.txt").read_text()
    assert f"Vec peak bytes: before reuse {before}, after reuse {after}" in report
    # and the reused buffers still compute softmax
    x = np.random.default_rng(5).standard_normal(args[0].shape, dtype=np.float32)
    y = np.zeros_like(x)
    jit_fn(x, y, config=RunConfig(save_kernels_dir=str(tmp_path)))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pl.program
class ThreeLive:
    """At `c` three [128, 128] FP32 tiles (3 x 64 KiB = 192 KiB) are live: over a2a3's 184 KiB UB,
    under a5's 240 KiB. Without reuse its five tiles (320 KiB) fit neither."""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[128, 128], pl.FP32], y: pl.Tensor[[128, 128], pl.FP32],
          out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        a: pl.Tile[[128, 128], pl.FP32] = pl.load(x, [0, 0], [128, 128])
        b: pl.Tile[[128, 128], pl.FP32] = pl.load(y, [0, 0], [128, 128])
        c: pl.Tile[[128, 128], pl.FP32] = pl.add(a, b)
        d: pl.Tile[[128, 128], pl.FP32] = pl.mul(c, a)
        e: pl.Tile[[128, 128], pl.FP32] = pl.sub(d, b)
        out2: pl.Tensor[[128, 128], pl.FP32] = pl.store(e, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 128], pl.FP32], y: pl.Tensor[[128, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        out2 = self.k(x, y, out)
        return out2


def test_vec_overflow_on_a2a3_names_the_space_and_the_sizes():
    with pytest.raises(CapacityError) as info:
        _lower(ThreeLive, "a2a3")
    message = str(info.value)
    assert "Vec (UB)" in message and "196608 bytes" in message and f"{184 * 1024} bytes" in message
    assert "largest tiles" in info.value.render()


def test_same_kernel_runs_on_a5sim_because_reuse_brings_it_under_240_kib():
    with pytest.raises(CapacityError, match=r"Vec \(UB\) buffers need 327680 bytes"):
        _lower(ThreeLive, "a5", without=("MemoryReuse",))
    kernel = _lower(ThreeLive, "a5")["k"]
    assert _vec_top(kernel) == 3 * 65536
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((2, 128, 128), dtype=np.float32)
    out = np.zeros((128, 128), np.float32)
    run(ThreeLive, x, y, out, config=RunConfig(platform="a5sim"))
    np.testing.assert_allclose(out, (x + y) * x - y, rtol=1e-5, atol=1e-5)


def test_widening_casts_and_transposes_never_write_over_their_dying_operand():
    @pl.program
    class Chain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[32, 32], pl.FP16], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
            a: pl.Tile[[32, 32], pl.FP16] = pl.load(x, [0, 0], [32, 32])
            b: pl.Tile[[32, 32], pl.FP16] = pl.exp(a)
            w: pl.Tile[[32, 32], pl.FP32] = pl.cast(b, target_type=pl.FP32)   # widening: must not take b's
            t: pl.Tile[[32, 32], pl.FP32] = pl.transpose(w, 0, 1)            # permuting: must not take w's
            out2: pl.Tensor[[32, 32], pl.FP32] = pl.store(t, [0, 0], out)
            return out2

    bases = _bases(_lower(Chain)["k"])
    assert bases["w"] != bases["b"] and bases["t"] != bases["w"]
    # a shares with w and b with t (their lives do not touch); the transpose's scratch (FlattenTileNdTo2D) is live
    # with w and t, so it needs a third buffer
    assert len(set(bases.values())) == 3 and bases["transpose_tmp"] not in (bases["w"], bases["t"])


def test_tiles_live_at_the_same_time_never_share():
    kernel = _lower(ThreeLive, "a5")["k"]
    bases = _bases(kernel)
    assert len({bases["a"], bases["b"], bases["c"]}) == 3
    assert bases["d"] in (bases["a"], bases["c"]) and bases["e"] in (bases["d"], bases["b"])


def test_a_buffer_read_in_a_later_iteration_is_live_for_the_whole_loop():
    @pl.program
    class Loop:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
            base: pl.Tile[[16, 64], pl.FP32] = pl.load(x, [0, 0], [16, 64])
            acc: pl.Tile[[16, 64], pl.FP32] = pl.muls(base, 0.0)
            for i in pl.range(3):
                step: pl.Tile[[16, 64], pl.FP32] = pl.muls(base, 2.0)     # base read every iteration
                acc = pl.add(acc, step)
            out2: pl.Tensor[[16, 64], pl.FP32] = pl.store(acc, [0, 0], out)
            return out2

    bases = _bases(_lower(Loop)["k"])
    assert bases["step"] != bases["base"]


@pl.program
class ReshapeView:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        a: pl.Tile[[16, 64], pl.FP32] = pl.load(x, [0, 0], [16, 64])
        b: pl.Tile[[32, 32], pl.FP32] = pl.reshape(a, [32, 32])
        c: pl.Tile[[32, 32], pl.FP32] = pl.exp(b)
        d: pl.Tile[[32, 32], pl.FP32] = pl.add(c, b)
        out2: pl.Tensor[[32, 32], pl.FP32] = pl.store(d, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out2 = self.k(x, out)
        return out2


def test_a_reshape_is_a_view_of_its_input_buffer():
    bases = _bases(_lower(ReshapeView)["k"])
    assert bases["b"] == bases["a"] and bases["c"] != bases["b"]     # b is read again by the add
    x = np.random.default_rng(13).standard_normal((16, 64), dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    run(ReshapeView, x, out, config=RunConfig(sim_strict_memory=True))
    r = x.reshape(32, 32)
    np.testing.assert_allclose(out, np.exp(r) + r, rtol=1e-5, atol=1e-6)


def _stage_program(kind: str):
    loop = "pl.pipeline(4, stage=2)" if kind == "pipeline" else "pl.range(4)"
    return pl.parse(f"""
import pypto.language as pl

@pl.program
class Stages:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        for i in {loop}:
            a: pl.Tile[[16, 64], pl.FP32] = pl.load(x, [i * 16, 0], [16, 64])
            b: pl.Tile[[16, 64], pl.FP32] = pl.exp(a)
            c: pl.Tile[[16, 64], pl.FP32] = pl.muls(b, 2.0)
            out = pl.store(c, [i * 16, 0], out)
        return out
""")


def test_pipeline_loop_loads_stay_apart_so_stages_can_overlap():
    seq = set(_bases(_lower(_stage_program("range"))["k"]).values())
    piped = _bases(_lower(_stage_program("pipeline"))["k"])
    assert len(seq) == 1
    # the load's buffer is private for the whole loop (the next prefetch must not land on it);
    # the compute intermediates may share with each other, not with the load
    assert piped["a"] not in (piped["b"], piped["c"]) and piped["b"] == piped["c"]
