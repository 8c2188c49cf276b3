"""InferTileMemorySpace, ExpandMixedKernel, InitMemRef and AllocateMemoryAddr."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CapacityError, UnsupportedError
from pypto.pypto_core import passes
from pypto.ir.visitor import collect


def _allocs(f):
    return [s for s in collect(f.body, lambda n: isinstance(n, ir.AssignStmt) and isinstance(n.value, ir.Call)
                               and not n.value.is_function_call() and n.value.op.name == "tile.alloc")]


def test_infer_tile_memory_space_defaults_to_vec_and_keeps_deduced_spaces():
    @pl.program
    class Before:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
            a: pl.Tile[[16, 16], pl.FP32] = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [16, 16], [16, 16],
                                                                     target_memory=pl.Mem.Mat)

    @pl.program
    class Expected:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
            a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 16], dtype=pl.FP32,
                                                                       target_memory=pl.Mem.Vec)
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [16, 16], [16, 16],
                                                                     target_memory=pl.Mem.Mat)

    assert ir.verifier.verify_property("TileMemoryInferred", Before)
    after = passes.infer_tile_memory_space()(Before)
    ir.assert_structural_equal(after, Expected)
    assert not ir.verifier.verify_property("TileMemoryInferred", after)


def _kernel_program(body_kind):
    if body_kind == "vector":
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
                b: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, a)
    elif body_kind == "cube":
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
                left: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
    else:
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
                m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
                a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
                b: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, a)
    return P


@pytest.mark.parametrize("kind, expected", [("vector", pl.FunctionType.AIV), ("cube", pl.FunctionType.AIC)])
def test_expand_mixed_kernel_retypes_pure_kernels(kind, expected):
    after = passes.expand_mixed_kernel()(_kernel_program(kind))
    assert after["k"].func_type is expected
    assert after["k"].level is pl.Level.CORE_GROUP
    assert not ir.verifier.verify_property("MixedKernelExpanded", after)


def test_expand_mixed_kernel_rejects_mixed_kernel():
    with pytest.raises(UnsupportedError, match="ExpandMixedKernel: kernel k mixes cube ops .* cube/vector split"):
        passes.expand_mixed_kernel()(_kernel_program("mixed"))


@pl.program
class _Loop:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(4, init_values=(a,)):
            acc2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, a)
            acc_rv = pl.yield_(acc2)
        r: pl.Tensor[[16, 16], pl.FP32] = pl.store(acc_rv, [0, 0], out)
        return r


def test_init_mem_ref_allocates_and_shares_buffers():
    after = passes.init_mem_ref()(_Loop)
    k = after["k"]
    allocs = _allocs(k)
    assert [(s.var.name_hint, s.value.kwargs["memory_space"], s.value.kwargs["size"], s.value.kwargs["addr"])
            for s in allocs] == [("mem_vec_0", pl.Mem.Vec, 1024, -1), ("mem_vec_1", pl.Mem.Vec, 1024, -1)]
    a = k.body.stmts[2].var
    loop = k.body.stmts[3]
    acc, acc2, acc_rv = loop.iter_args[0], loop.body.stmts[0].var, loop.return_vars[0]
    assert a.type.memref.base is allocs[0].var
    assert acc.type.memref.base is a.type.memref.base is acc_rv.type.memref.base
    assert acc2.type.memref.base is allocs[1].var
    assert not ir.verifier.verify_property("HasMemRefs", after)


def test_allocate_memory_addr_places_sorted_and_aligned():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, x: pl.Tensor[[4, 5], pl.FP32]):
            a: pl.Tile[[4, 5], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [4, 5])
            b: pl.Tile[[4, 5], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, a)
            c: pl.Tile[[4, 5], pl.FP32, pl.Mem.Vec] = pl.tile.add(b, a)

    after = passes.allocate_memory_addr()(passes.init_mem_ref()(P))
    addrs = [s.value.kwargs["addr"] for s in _allocs(after["k"])]
    assert addrs == [0, 96, 192]  # 80-byte tiles, each start aligned to 32 bytes
    assert not ir.verifier.verify_property("AllocatedMemoryAddr", after)


def test_capacity_is_read_from_the_context_platform():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, x: pl.Tensor[[200, 256], pl.FP32]):
            a: pl.Tile[[200, 256], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [200, 256])

    with_refs = passes.init_mem_ref()(P)   # 204800 bytes: over a2a3's 184 KB UB, under a5's 240 KB
    with passes.PassContext(platform="a5"):
        passes.allocate_memory_addr()(with_refs)
    with pytest.raises(CapacityError, match=r"Vec \(UB\) buffers need 204800 bytes .* 188416 bytes"):
        with passes.PassContext(platform="a2a3"):
            passes.allocate_memory_addr()(with_refs)
