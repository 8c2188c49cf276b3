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

    # the annotation without a space takes the create's deduced Vec (annotations fill gaps), so the
    # program is already inferred; the pass keeps every deduced space
    assert Before["k"].body.stmts[0].var.type.memory_space is pl.Mem.Vec
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
    # the reference derives a kernel's level from its type: AIV → Level.AIV, AIC → Level.AIC
    assert after["k"].level is (pl.Level.AIV if expected is pl.FunctionType.AIV else pl.Level.AIC)
    assert not ir.verifier.verify_property("MixedKernelExpanded", after)


def test_expand_mixed_kernel_splits_mixed_kernel():
    after = passes.expand_mixed_kernel()(_kernel_program("mixed"))
    assert [(f.name, f.func_type) for f in after.functions.values()] == [
        ("k_aic", pl.FunctionType.AIC), ("k_aiv", pl.FunctionType.AIV), ("k", pl.FunctionType.Group)]


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
    a, copy, loop = k.body.stmts[2].var, k.body.stmts[3], k.body.stmts[4]
    # `a` is read inside the loop, so the carry starts from a copy and accumulates in the copy's buffer
    assert copy.value.op.name == "tile.move" and copy.value.args[0] is a
    acc, acc2, acc_rv = loop.iter_args[0], loop.body.stmts[0].var, loop.return_vars[0]
    assert a.type.memref.base is allocs[0].var
    assert acc.init_value is copy.var
    assert copy.var.type.memref.base is acc.type.memref.base is acc2.type.memref.base is acc_rv.type.memref.base \
        is allocs[1].var
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


def test_carried_if_result_is_copied_before_the_yield():
    """The next iteration's op would overwrite the then-branch buffer the carry still lives in."""
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            m0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 64])
            for j, (m,) in pl.range(4, init_values=(m0,)):
                b: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(m)
                if j == 0:
                    nm = pl.yield_(b)
                else:
                    c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.maximum(m, b)
                    nm = pl.yield_(c)
                d: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.sub(m, nm)
                m_rv = pl.yield_(nm)
            r: pl.Tensor[[16, 64], pl.FP32] = pl.store(m_rv, [0, 0], out)
            return r

    k = passes.init_mem_ref()(P)["k"]
    loop = k.body.stmts[-3]
    *_, copy, y = loop.body.stmts
    assert copy.value.op.name == "tile.move" and y.values[0] is copy.var
    assert copy.var.type.memref.base is loop.iter_args[0].type.memref.base
    b = loop.body.stmts[0].var
    assert b.type.memref.base is not loop.iter_args[0].type.memref.base


def test_acc_carry_that_needs_a_copy_is_rejected_clearly():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIC)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32]):
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            l: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.move(m, target_memory=pl.Mem.Left)
            r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Right] = pl.move(m, target_memory=pl.Mem.Right)
            c0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
            for i, (c,) in pl.range(2, init_values=(c0,)):
                c2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(l, r)
                c_rv = pl.yield_(c0)

    with pytest.raises(UnsupportedError, match="loop-carried tile 'c' in Acc"):
        passes.init_mem_ref()(P)


def test_if_result_shares_one_buffer_when_both_branch_values_are_local():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.AIV)
        def k(self, x: pl.Tensor[[16, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
              out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            a: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 64])
            if n > 1:
                b: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(a)
                r = pl.yield_(b)
            else:
                c: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, a)
                r = pl.yield_(c)
            s: pl.Tensor[[16, 64], pl.FP32] = pl.store(r, [0, 0], out)
            return s

    k = passes.init_mem_ref()(P)["k"]
    branch = k.body.stmts[-3]
    b, c, r = branch.then_body.stmts[0].var, branch.else_body.stmts[0].var, branch.return_vars[0]
    assert b.type.memref.base is c.type.memref.base is r.type.memref.base
    assert len(_allocs(k)) == 2


def test_shared_op_follows_its_result_space():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32]):
            m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
            v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 16], dtype=pl.FP32,
                                                                       target_memory=pl.Mem.Vec)

    from pypto.passes.expand_mixed_kernel import call_affinity
    load, create = (s.value for s in P["k"].body.stmts[:2])
    assert (call_affinity(load), call_affinity(create)) == ("cube", "vector")
