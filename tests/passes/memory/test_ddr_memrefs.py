"""InitMemRef on tensors: every tensor Var gets a DDR MemRef — one base per parameter / created tensor,
shared by the ops that write into a GM tensor (tile.store, tensor.assemble), by views (slice, view,
reshape) at their byte offset, and along loop carries. DDR bases are bound nowhere (GM is the
runtime's): they print by name, re-parse to one base, get no tile.alloc and no address."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.enums import MemorySpace
from pypto.ir.visitor import collect
from pypto.pypto_core import passes
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program


@pl.program
class StoreBefore:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [64, 64])
        b: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.add(a, a)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.store(b, [0, 0], out)
        return out2


@pl.program
class StoreExpected:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_0", 0, 16384)],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_1", 0, 16384)]]
          ) -> pl.Tensor[[64, 64], pl.FP32]:
        mem_vec_0: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Vec, size=16384, addr=-1)
        mem_vec_1: pl.Ptr = pl.tile.alloc(memory_space=pl.Mem.Vec, size=16384, addr=-1)
        a: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_vec_0, 0, 16384), pl.Mem.Vec] = pl.load(x, [0, 0], [64, 64])
        b: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_vec_1, 0, 16384), pl.Mem.Vec] = pl.add(a, a)
        out2: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_1", 0, 16384)] = pl.store(b, [0, 0], out)
        return out2


def test_params_get_ddr_bases_and_a_store_result_shares_its_target():
    after = passes.init_mem_ref()(StoreBefore)
    ir.assert_structural_equal(after, StoreExpected)
    kernel = after["k"]
    x, out = kernel.params
    stored = [v for v in ir.verifier.defined_vars(kernel.body) if v.name_hint == "out2"][0]
    assert stored.type.memref.base is out.type.memref.base is not x.type.memref.base


def test_ddr_bases_print_by_name_and_read_back_as_one_base():
    after = passes.init_mem_ref()(StoreBefore)
    text = after.as_python()
    assert text.count("pl.MemRef('mem_ddr_1', 0, 16384)") == 2 and "mem_ddr_1: pl.Ptr" not in text
    reparsed = pl.parse(text)
    ir.assert_structural_equal(reparsed, after)
    out = reparsed["k"].params[1]
    stored = [v for v in ir.verifier.defined_vars(reparsed["k"].body) if v.name_hint == "out2"][0]
    assert stored.type.memref.base is out.type.memref.base


@pl.program
class Views:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
        rows: pl.Tensor[[16, 64], pl.FP32] = pl.slice(x, [16, 64], [16, 0])
        window: pl.Tensor[[16, 32], pl.FP32] = pl.slice(x, [16, 32], [r, 8])
        flat: pl.Tensor[[4096], pl.FP32] = pl.reshape(x, [4096])
        made: pl.Tensor[[64, 64], pl.FP32] = pl.create_tensor([64, 64], dtype=pl.FP32)
        made2: pl.Tensor[[64, 64], pl.FP32] = pl.assemble(made, rows, [0, 0])
        return made2


def _tensor_refs(func) -> dict:
    return {v.name_hint: v.type.memref for v in [*func.params, *ir.verifier.defined_vars(func.body)]
            if isinstance(v.type, ir.TensorType)}


def test_views_share_their_source_base_at_their_byte_offset_and_creates_get_their_own():
    refs = _tensor_refs(passes.init_mem_ref()(Views)["main"])
    x = refs["x"].base
    assert (refs["rows"].base, refs["rows"].byte_offset.value, refs["rows"].size) == (x, 16 * 64 * 4, 16 * 64 * 4)
    assert refs["window"].base is x and not isinstance(refs["window"].byte_offset, ir.ConstInt)   # r*256 + 32
    assert (refs["flat"].base, refs["flat"].byte_offset.value, refs["flat"].size) == (x, 0, 16384)
    assert refs["made"].base is not x and refs["made2"].base is refs["made"].base   # assemble writes into made


@pl.program
class Carried:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i, (o,) in pl.range(0, 64, 16, init_values=(out,)):
            t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [i, 0], [16, 64])
            o2: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [i, 0], o)
            o3 = pl.yield_(o2)
        return o3


def test_a_carried_output_tensor_is_one_ddr_buffer_through_the_loop():
    refs = _tensor_refs(passes.init_mem_ref()(Carried)["k"])
    assert refs["o"].base is refs["o2"].base is refs["o3"].base is refs["out"].base
    assert refs["x"].base is not refs["out"].base


@pl.program
class Kernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        a: pl.Tile[[64, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
        b: pl.Tile[[64, 64], pl.FP32] = pl.exp(a)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.store(b, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out2 = self.k(x, out)
        return out2


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_ddr_memrefs_get_no_alloc_no_address_and_the_kernel_still_runs(platform):
    compiled = compile_program(Kernel, platform=platform)
    kernel = compiled.lowered["k"]
    assert all(m is not None and m.base.name_hint.startswith("mem_ddr_") for m in _tensor_refs(kernel).values())
    allocs = collect(kernel.body, lambda n: isinstance(n, ir.Call) and not n.is_function_call()
                     and n.op.name == "tile.alloc")
    assert allocs and all(c.kwargs["memory_space"] is not MemorySpace.DDR for c in allocs)
    assert all(c.kwargs["addr"] >= 0 for c in allocs)
    x = np.random.default_rng(3).standard_normal((64, 64), dtype=np.float32)
    out = np.zeros_like(x)
    run(Kernel, x, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)


@pl.program
class ReturnedStore:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        return pl.store(pl.add(t, t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        return self.k(x, y)


def test_a_store_returned_directly_takes_its_targets_memref_and_round_trips(monkeypatch):
    # the returned call is not bound to a Var, so its type is re-deduced from the retyped target:
    # printed and parsed again, it must be the same program (it once was 'memref None vs MemRef')
    monkeypatch.setenv("PYPTO_VERIFY_LEVEL", "roundtrip")
    compiled = compile_program(ReturnedStore, platform="a2a3sim")
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    compiled(x, y)
    np.testing.assert_array_equal(y, x + x)
