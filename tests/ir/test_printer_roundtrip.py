"""Print → parse → structurally equal, for every construct the printer emits.

Each program is written in the DSL, parsed, printed with `ir.python_print`, parsed again
with `pl.parse`, and compared with `ir.assert_structural_equal`; the second print must also
be identical text (printing is a fixed point).
"""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.expr import ConstInt, Var
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, ReturnStmt
from pypto.ir.types import MemRef, PtrType, ScalarType, TensorType, TileType, TileView


def roundtrip(node):
    text = ir.python_print(node)
    again = pl.parse(text, "roundtrip.py")
    ir.assert_structural_equal(node, again)
    assert ir.python_print(again) == text
    return again


M = pl.dynamic("M")
ROWS = 32


@pl.program
class SeedBefore:
    """The "before" program of seed 003 (ConvertTensorToTileOps)."""

    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = self.main_incore_0(x)
        return y


@pl.program
class TileKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
               out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        s = pl.add(ta, tb)
        m = pl.mul(s, 2.0)
        e = pl.exp(m)
        out = pl.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.create_tensor([64, 64], dtype=pl.FP32)
        out = self.kernel(a, b, out)
        return out


@pl.program
class Loops:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, x: pl.Tensor[[128, 64], pl.FP32], out: pl.InOut[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        init = pl.load(x, [0, 0], [ROWS, 64])
        for i, (acc,) in pl.range(1, 4, init_values=(init,)):
            t = pl.load(x, [i * ROWS, 0], [ROWS, 64])
            nxt = pl.add(acc, t)
            acc_out = pl.yield_(nxt)
        for j in pl.parallel(2):
            pass
        for k in pl.unroll(0, 4, 2):
            pass
        for p, (c,) in pl.pipeline(4, init_values=(acc_out,), stage=2):
            c2 = pl.add(c, c)
            c_out = pl.yield_(c2)
        for q, (d,) in pl.range(2, init_values=(c_out,), attrs={"note": "x"}):
            d_out = pl.yield_(d)
        out = pl.store(d_out, [0, 0], out)
        return out


@pl.program
class Branches:
    @pl.function(type=pl.FunctionType.Opaque)
    def f(self, n: pl.Scalar[pl.INDEX], x: pl.Tensor[[16], pl.FP32]) -> pl.Scalar[pl.INDEX]:
        a: pl.Scalar[pl.INDEX] = n * 2 + 1
        if a > 4:
            r = pl.yield_(a)
        else:
            r = pl.yield_(n)
        b: pl.Scalar[pl.INDEX] = 0
        if n == 3 and a < 10:
            b = r - 1
        c: pl.Scalar[pl.INT32] = pl.cast(b, pl.INT32)
        d: pl.Scalar[pl.INT32] = pl.const(7, pl.INT32)
        e: pl.Scalar[pl.INDEX] = pl.min(a, b)
        g: pl.Scalar[pl.INDEX] = pl.max(a, n) // 2 % 3
        h: pl.Scalar[pl.FP32] = pl.const(1.5, pl.FP32)
        k: pl.Scalar[pl.BOOL] = not (a >= b)
        return g


@pl.program
class Whiles:
    @pl.function(type=pl.FunctionType.Opaque)
    def w(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        i: pl.Scalar[pl.INDEX] = 0
        while i < n:
            i = i + 1
        for (j, s) in pl.while_(init_values=(0, 0)):
            pl.cond(j < n)
            j2: pl.Scalar[pl.INDEX] = j + 1
            s2: pl.Scalar[pl.INDEX] = s + j
            j_out, s_out = pl.yield_(j2, s2)
        for t in pl.range(10):
            if t > 5:
                break
            if t == 2:
                continue
        return s_out


@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            y = pl.add(x, x)
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            z = pl.add(y, x)
        with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker):
            w = pl.add(z, x)
        with pl.cluster(name_hint="grp"):
            with pl.spmd(4, sync_start=True):
                v = pl.add(w, x)
        return v

    @pl.function(type=pl.FunctionType.InCore)
    def lanes(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            t = pl.load(x, [0, lane * 32], [64, 32])
        return x


@pl.program
class Dynamic:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        out = pl.store(t, [0, 0], out)
        return out


@pl.program
class MultiReturn:
    @pl.function(type=pl.FunctionType.InCore)
    def two(self, x: pl.Tensor[[16], pl.FP32]) -> tuple[pl.Tensor[[16], pl.FP32], pl.Tensor[[16], pl.FP32]]:
        a = pl.add(x, x)
        b = pl.mul(x, x)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration, attrs={"entry": True, "mode": pl.SplitMode.UP_DOWN})
    def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        p, q = self.two(x)
        return q


@pl.program
class Levels:
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        return x

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP16, pl.TensorView(stride=[32, 1], layout=pl.TensorLayout.ND)]) -> pl.Tensor[[16, 16], pl.FP16]:
        t = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        return x


PROGRAMS = [SeedBefore, TileKernel, Loops, Branches, Whiles, Scopes, Dynamic, MultiReturn, Levels]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_roundtrips(program):
    roundtrip(program)


def test_seed_003_before_text_parses_prints_and_reparses():
    text = '''
@pl.program
class Before:
    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        y: pl.Tensor[[64], pl.FP32] = self.main_incore_0(x)
        return y
'''
    prog = pl.parse(text)
    assert isinstance(prog, ir.Program) and list(prog.functions) == ["main_incore_0", "main"]
    ir.assert_structural_equal(prog, SeedBefore)
    roundtrip(prog)


def test_memrefs_alloc_and_tile_views_roundtrip():
    x = Var("x", TensorType([64, 64], FP32))
    mem = Var("mem0", PtrType())
    alloc = ir.create_op_call("tile.alloc", [], {"memory_space": ir.MemorySpace.Vec, "size": 16384, "addr": -1})
    load = ir.create_op_call("tile.load", [x, [0, 0], [64, 64], [32, 64]], {"target_memory": ir.MemorySpace.Vec})
    view = TileView(valid_shape=[32, 64], start_offset=ConstInt(0), pad=ir.PadValue.min)
    ttype = TileType([64, 64], FP32, MemRef(mem, 0, 16384), view, ir.MemorySpace.Vec)
    t = Var("t", ttype)
    body = SeqStmts([AssignStmt(mem, alloc.replace(type=PtrType())), AssignStmt(t, load.replace(type=ttype)),
                     ReturnStmt([x])])
    fn = ir.Function("k", [x], [x.type], body, ir.FunctionType.AIV)
    again = roundtrip(ir.Program([fn], "P"))
    t2 = again.functions["k"].body.stmts[1].var
    assert t2.type.memref.base is again.functions["k"].body.stmts[0].var


def test_non_ssa_rebinding_reuses_the_var_and_roundtrips():
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(x, [0], [16])
        for i in pl.range(3):
            t = pl.add(t, t)
        return x
    assigns = [s for s in ir.flatten_to_stmts(k.body) if isinstance(s, AssignStmt)]
    loop = [s for s in ir.flatten_to_stmts(k.body) if isinstance(s, ForStmt)][0]
    inner = ir.flatten_to_stmts(loop.body)[0]
    assert inner.var is assigns[0].var
    roundtrip(k)


def test_function_roundtrips_standalone():
    @pl.function(type=pl.FunctionType.Opaque)
    def f(n: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:
        m: pl.Scalar[pl.INT32] = n + pl.const(2, pl.INT32)
        return m
    again = roundtrip(f)
    assert isinstance(again, ir.Function)


def test_dynamic_dims_print_as_module_level_and_share_one_var():
    text = ir.python_print(Dynamic)
    assert "M = pl.dynamic('M')" in text
    again = pl.parse(text)
    k = again.functions["k"]
    assert k.params[0].type.shape[0] is k.params[1].type.shape[0]


def test_function_call_attrs_and_special_floats_roundtrip():
    text = '''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16], pl.FP32], o: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        a: pl.Scalar[pl.FP32] = float("inf")
        b: pl.Scalar[pl.FP32] = -float("inf")
        c: pl.Scalar[pl.FP16] = pl.const(0.5, pl.FP16)
        d: pl.Scalar[pl.BOOL] = True
        e: pl.Scalar[pl.INT32] = pl.scalar_add(pl.const(1, pl.INT32), pl.const(2, pl.INT32), dtype=pl.INT64)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        o: pl.Tensor[[16], pl.FP32] = pl.tensor.create([16], dtype=pl.FP32, layout=pl.TensorLayout.ND)
        y: pl.Tensor[[16], pl.FP32] = self.k(x, o, attrs={'arg_directions': [pl.ParamDirection.In, pl.ParamDirection.Out]})
        return y
'''
    prog = pl.parse(text)
    call = prog.functions["main"].body.stmts[1].value
    assert call.attrs == {"arg_directions": [pl.ParamDirection.In, pl.ParamDirection.Out]}
    roundtrip(prog)


def test_distributed_tensor_annotations_roundtrip():
    text = '''
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pld.DistributedTensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        return x
'''
    prog = pl.parse(text)
    assert isinstance(prog.functions["k"].params[0].type, ir.DistributedTensorType)
    roundtrip(prog)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_ssa_form_roundtrips(program):
    """After ConvertToSSA: loop iter_args, if-phis and renamed Vars all read back."""
    from pypto.pypto_core import passes
    roundtrip(passes.convert_to_ssa()(program))


@pytest.mark.parametrize("program", [SeedBefore, TileKernel, Loops], ids=lambda p: p.name)
def test_final_ir_roundtrips(program):
    """The Default pipeline's output: outlined kernels, tile ops, memrefs with tile.alloc bases, addresses."""
    from pypto.pypto_core import passes
    final = passes.PassManager.get_strategy(passes.OptimizationStrategy.Default).run_passes(program)
    text = ir.python_print(final)
    assert "pl.tile.alloc(" in text and "pl.MemRef(" in text
    roundtrip(final)


def test_a_free_int32_dim_keeps_its_dtype():
    # an outlined kernel's parameter type can name a scalar of the caller (INT32 here): the printer
    # declares it at module level, and the re-parsed dim must still be INT32, not pl.dynamic's INDEX
    from pypto.ir.dtypes import INT32
    from pypto.ir.function import Function
    from pypto.ir.types import TensorView
    n = Var("n", ScalarType(INT32))
    y = Var("y", TensorType([64, 64], FP32, tensor_view=TensorView(valid_shape=[n, 64])))
    f = Function("k", [y], [], SeqStmts([ReturnStmt([])]), ir.FunctionType.InCore)
    again = roundtrip(f)
    assert again.params[0].type.tensor_view.valid_shape[0].type.dtype == INT32
    assert "pl.dynamic('n', pl.INT32)" in ir.python_print(f)
