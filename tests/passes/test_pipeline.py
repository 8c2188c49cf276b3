"""The Default pipeline end to end (under ROUNDTRIP verification): a tensor-level program with a
pl.at scope and a tile-level program, checked structurally and run on the simulator."""

import os

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CapacityError
from pypto.ir.visitor import collect
from pypto.passes import (CHIP_PIPELINE, DEFAULT_PIPELINE, CallbackInstrument, OptimizationStrategy, PassContext,
                          PassManager, VerificationLevel)
from pypto.pypto_core import passes
from tests.helpers import op_names

@pl.program
class TensorLevel:
    @pl.function
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.add(x, x)
            acc = y
            for i in pl.range(3):
                acc = pl.add(acc, y)
            if n > 2:
                acc = pl.mul(acc, 2.0)
            else:
                acc = pl.sub(acc, x)
            out[:] = acc
        return out


@pl.program
class TileLevel:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[32, 32], pl.FP32],
               out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        acc = pl.load(x, [0, 0], [32, 32])
        for i in pl.range(4):
            acc = pl.tile.add(acc, acc)
        r = pl.store(acc, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        r = self.kernel(x, out)
        return r


def _lower(program):
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        return PassManager.get_strategy(OptimizationStrategy.Default).run_passes(program)


def test_the_manager_runs_the_default_pipeline_objects():
    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    assert pm.passes == DEFAULT_PIPELINE
    assert pm.pass_names() == [p.name for p in DEFAULT_PIPELINE]
    assert DEFAULT_PIPELINE[:len(CHIP_PIPELINE)] == CHIP_PIPELINE


def test_each_pass_is_named_after_its_module():
    """File name = pass name: ConvertToSSA is pypto/passes/convert_to_ssa(.py | /), InitMemRef
    pypto/passes/memory/init_mem_ref.py; the module's factory of that name builds the pass."""
    import importlib
    import pathlib
    import pypto.passes
    root = pathlib.Path(pypto.passes.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if parts:
            modules.setdefault(parts[-1].replace("_", ""), ".".join(parts))
    names = [p.name for p in DEFAULT_PIPELINE]
    assert len(set(names)) == len(names)
    for p in DEFAULT_PIPELINE:
        module = modules.get(p.name.lower())
        assert module is not None, f"pass {p.name} has no module pypto/passes/[<package>/]<{p.name} in snake_case>"
        stem = module.rpartition(".")[2]
        factory = getattr(importlib.import_module(f"pypto.passes.{module}"), stem)
        assert factory().name == p.name
        assert getattr(passes, stem) is factory          # pypto.pypto_core.passes gathers every factory


def test_every_required_property_is_produced_earlier_in_the_pipeline():
    holds = set()
    for p in DEFAULT_PIPELINE:
        assert p.properties.required <= holds, f"{p.name} runs before a pass producing {p.properties.required - holds}"
        holds = (holds | p.properties.produced) - p.properties.invalidated


def test_run_selects_passes_by_name():
    seen = []
    with PassContext([CallbackInstrument(before=lambda p, prog: seen.append(p.name))]):
        pm = PassManager()
        pm.run(TensorLevel, until="FlattenCallExpr", skip={"Simplify"})
        assert seen == ["InlineFunctions", "ConvertToSSA", "NormalizeStmtStructure", "FlattenCallExpr"]
        seen.clear()
        front = pm.run(TensorLevel, until="FlattenCallExpr")
        tiles = pm.run(front, after="FlattenCallExpr", until="ConvertTensorToTileOps")
        assert seen[5:] == ["OutlineHierarchyScopes", "OutlineIncoreScopes", "OutlineClusterScopes",
                            "ConvertTensorToTileOps"]
    ir.assert_structural_equal(tiles, pm.run(TensorLevel, until="ConvertTensorToTileOps"))


@pytest.mark.parametrize("kwargs, message", [({"until": "NoSuchPass"}, "until='NoSuchPass' is not a pass"),
                                             ({"skip": {"Simplfy"}}, "skip='Simplfy' is not a pass"),
                                             ({"after": "Simplify", "until": "ConvertToSSA"}, "selects no pass")])
def test_run_rejects_unknown_or_empty_selections(kwargs, message):
    from pypto.errors import ValueCheckError
    with pytest.raises(ValueCheckError, match=message):
        PassManager().run(TensorLevel, **kwargs)


def test_an_instrument_can_veto_a_pass():
    class NoSimplify(passes.Instrument):
        def should_run(self, pass_, program):
            return pass_.name != "Simplify"

    seen = []
    with PassContext([NoSimplify(), CallbackInstrument(after=lambda p, prog: seen.append(p.name))]):
        same = passes.simplify()(TensorLevel)
        PassManager().run(TensorLevel, until="NormalizeStmtStructure")
    assert same is TensorLevel
    assert seen == ["InlineFunctions", "ConvertToSSA", "NormalizeStmtStructure"]


def test_tensor_level_program_lowers_to_an_aiv_kernel():
    final = _lower(TensorLevel)
    kernel, main = final["main_incore_0"], final["main"]
    assert kernel.func_type is pl.FunctionType.AIV and main.func_type is pl.FunctionType.Orchestration
    assert kernel.param_directions == (pl.ParamDirection.In, pl.ParamDirection.In, pl.ParamDirection.Out)
    names = [n for n in op_names(kernel) if n != "tile.alloc"]
    # `acc = y` starts the loop but y is read inside it: the carry starts from a copy of y
    assert names == ["tile.load", "tile.add", "tile.move", "tile.add", "tile.muls", "tile.sub", "tile.store"]
    addrs = sorted(c.kwargs["addr"] for c in collect(kernel.body, lambda n: isinstance(n, ir.Call)
                                                    and not n.is_function_call() and n.op.name == "tile.alloc"))
    assert addrs == [i * 8192 for i in range(len(addrs))]
    passes.verify_properties({passes.IRProperty.AllocatedMemoryAddr, passes.IRProperty.HasMemRefs,
                              passes.IRProperty.MixedKernelExpanded, passes.IRProperty.SSAForm}, final)


def test_tile_level_program_accumulates_in_place():
    kernel = _lower(TileLevel)["kernel"]
    assert kernel.func_type is pl.FunctionType.AIV
    (loop,) = collect(kernel.body, lambda n: isinstance(n, ir.ForStmt))
    ia, rv = loop.iter_args[0], loop.return_vars[0]
    # the load feeds only the loop and the body reads the carry before rewriting it: one buffer, no copy
    bases = {ia.type.memref.base, ia.init_value.type.memref.base, rv.type.memref.base,
             loop.body.stmts[-1].values[0].type.memref.base}
    assert len(bases) == 1 and "tile.move" not in op_names(kernel)


@pytest.mark.parametrize("n", [3, 1])
def test_tensor_level_program_runs_on_the_simulator(n):
    from pypto.runtime import RunConfig, run
    x = np.random.default_rng(1).standard_normal((32, 64), dtype=np.float32)
    out = np.zeros((32, 64), np.float32)
    run(TensorLevel, x, n, out, config=RunConfig())
    want = 8 * x * 2 if n > 2 else 8 * x - x
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_tile_level_program_runs_on_the_simulator():
    from pypto.runtime import RunConfig, run
    x = np.random.default_rng(2).standard_normal((32, 32), dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    run(TileLevel, x, out, config=RunConfig())
    np.testing.assert_allclose(out, 16 * x, rtol=1e-5, atol=1e-5)


def test_run_passes_dumps_every_pass(tmp_path):
    PassManager.get_strategy().run_passes(TensorLevel, dump_ir=True, output_dir=str(tmp_path))
    order = [p.name for p in DEFAULT_PIPELINE]
    files = sorted(os.listdir(tmp_path / "passes_dump"))
    assert files == ["00_frontend.py"] + [f"{i + 1:02d}_after_{n}.py" for i, n in enumerate(order)]
    frontend = (tmp_path / "passes_dump" / "00_frontend.py").read_text()
    assert frontend == ir.python_print(TensorLevel)
    at = order.index("AllocateMemoryAddr") + 1
    last = (tmp_path / "passes_dump" / f"{at:02d}_after_AllocateMemoryAddr.py").read_text()
    assert "pl.tile.alloc(" in last and "addr=8192" in last
    ir.assert_structural_equal(pl.parse(last), PassManager.get_strategy().run_passes(TensorLevel))


def test_capacity_error_names_space_sizes_and_tiles():
    @pl.program
    class Big:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[512, 512], pl.FP32],
              out: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
            big = pl.load(x, [0, 0], [512, 512])
            r = pl.store(big, [0, 0], out)
            return r

    with pytest.raises(CapacityError) as ei:
        PassManager.get_strategy().run_passes(Big)
    err = ei.value
    assert "Vec (UB)" in str(err) and "1048576" in str(err) and str(184 * 1024) in str(err)
    assert "'big' 1048576 B at" in err.note and "test_pipeline.py" in err.note
    assert "test_pipeline.py" in err.render()


def test_matmul_program_lowers_to_aic_kernel_and_runs():
    from pypto.runtime import RunConfig, run

    @pl.program
    class MM:
        @pl.function
        def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.matmul(a, b, b_trans=True)
            return out

    kernel = _lower(MM)["main_incore_0"]
    assert kernel.func_type is pl.FunctionType.AIC
    spaces = [c.kwargs["memory_space"] for c in collect(kernel.body, lambda n: isinstance(n, ir.Call)
                                                        and not n.is_function_call() and n.op.name == "tile.alloc")]
    assert sorted(s.name for s in set(spaces)) == ["Acc", "Left", "Mat", "Right"]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 64), dtype=np.float32)
    b = rng.standard_normal((32, 64), dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    run(MM, a, b, out, config=RunConfig())
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-4, atol=1e-4)


@pl.program
class BlockedSoftmax:
    @pl.function
    def main(self, x: pl.Tensor[[128, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i in pl.range(0, 128, 32):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.slice(x, [32, 64], [i, 0])
                e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
                out[i:i + 32, :] = pl.row_expand_div(e, pl.row_sum(e))
        return out


def test_blocked_softmax_kernel_in_orchestration_loop():
    from pypto.runtime import RunConfig, run
    final = _lower(BlockedSoftmax)
    kernel, main = final["main_incore_0"], final["main"]
    assert [p.name_hint for p in kernel.params] == ["x", "i", "out"]   # the loop-carried out, not its init too
    assert kernel.param_directions[-1] is pl.ParamDirection.Out
    (loop,) = collect(main.body, lambda n: isinstance(n, ir.ForStmt))
    assert loop.body.stmts[0].value.args[2] is loop.iter_args[0]
    assert op_names(kernel).count("tile.create") == 2          # scratch tiles of row_max / row_sum
    x = np.random.default_rng(3).standard_normal((128, 64), dtype=np.float32)
    out = np.zeros((128, 64), np.float32)
    run(BlockedSoftmax, x, out, config=RunConfig())
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pl.program
class RunningMax:
    """A carry that an if produces, read after an op that re-runs every iteration."""
    @pl.function
    def main(self, x: pl.Tensor[[16, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            m = pl.row_max(pl.slice(x, [16, 64], [0, 0]))
            total = pl.mul(m, 0.0)
            for j in pl.range(4):
                bm = pl.row_max(pl.slice(x, [16, 64], [0, j * 64]))
                if j == 0:
                    new_m = bm
                else:
                    new_m = pl.maximum(m, bm)
                total = pl.add(total, pl.sub(new_m, m))
                m = new_m
            out[:] = pl.add(total, m)
        return out


def test_loop_carries_survive_buffer_reuse_across_iterations():
    from pypto.runtime import RunConfig, run
    _lower(RunningMax)
    x = np.random.default_rng(4).standard_normal((16, 256), dtype=np.float32)
    out = np.zeros((16, 1), np.float32)
    run(RunningMax, x, out, config=RunConfig())
    m0 = x[:, :64].max(axis=1, keepdims=True)
    m, total = m0, np.zeros_like(m0)
    for j in range(4):
        bm = x[:, j * 64:(j + 1) * 64].max(axis=1, keepdims=True)
        new_m = bm if j == 0 else np.maximum(m, bm)
        total, m = total + (new_m - m), new_m
    np.testing.assert_allclose(out, total + m, rtol=1e-5, atol=1e-5)


@pl.program
class TwoKernelsPerIteration:
    @pl.function
    def main(self, x: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        acc = x
        for i in pl.range(3):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.add(acc, x)
                u = pl.exp(pl.mul(t, 0.1))
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="combine"):
                acc = pl.add(t, u)
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = acc
        return out


def test_kernels_exchange_tensors_through_orchestration():
    from pypto.runtime import RunConfig, run
    final = _lower(TwoKernelsPerIteration)
    assert {f.func_type for name, f in final.functions.items() if name != "main"} == {pl.FunctionType.AIV}
    (loop,) = collect(final["main"].body, lambda n: isinstance(n, ir.ForStmt))
    creates = [s for s in loop.body.stmts if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call)
               and not s.value.is_function_call() and s.value.op.name == "tensor.create"]
    assert len(creates) == 3   # two results of the first kernel, one of "combine", allocated per iteration
    x = np.random.default_rng(6).standard_normal((16, 64), dtype=np.float32)
    out = np.zeros((16, 64), np.float32)
    run(TwoKernelsPerIteration, x, out, config=RunConfig())
    acc = x.astype(np.float64)
    for _ in range(3):
        t = acc + x
        acc = t + np.exp(t * 0.1)
    np.testing.assert_allclose(out, acc, rtol=1e-5, atol=1e-5)


@pl.program
class KLoopMatmul:
    @pl.function
    def main(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.create_tensor([32, 32], dtype=pl.FP32)
            for k in pl.range(4):
                ak = pl.slice(a, [32, 32], [0, k * 32])
                bk = pl.slice(b, [32, 32], [k * 32, 0])
                if k == 0:
                    acc = pl.matmul(ak, bk)
                else:
                    acc = pl.matmul_acc(acc, ak, bk)
            out[:] = acc
        return out


def test_k_loop_accumulates_in_one_acc_buffer():
    from pypto.runtime import RunConfig, run
    kernel = _lower(KLoopMatmul)["main_incore_0"]
    assert kernel.func_type is pl.FunctionType.AIC
    allocs = collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                     and n.op.name == "tile.alloc")
    assert [c.kwargs["memory_space"] for c in allocs].count(pl.Mem.Acc) == 1   # create, matmul, matmul_acc share it
    assert "tile.move" not in [c.op.name for c in collect(kernel.body, lambda n: isinstance(n, ir.Call)
                                                         and not n.is_function_call()
                                                         and n.type is not None
                                                         and getattr(n.type, "memory_space", None) is pl.Mem.Acc)]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((32, 128), dtype=np.float32)
    b = rng.standard_normal((128, 32), dtype=np.float32)
    out = np.zeros((32, 32), np.float32)
    run(KLoopMatmul, a, b, out, config=RunConfig())
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
