"""A load / load / elementwise op / store group runs as one numpy call (pypto.runtime.sim.fused_blocks) only
when its tiles are invisible to the rest of the kernel; the results, errors, warnings and write-back
are those of the four ops, and so is the arena the kernel leaves behind."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, PyptoWarning
from pypto.ir import AssignStmt
from pypto.runtime import RunConfig, run
from pypto.runtime.sim import fused_blocks, host_args

ROWS, COLS, BLOCK = 32, 128, 8


def _blocked(op):
    @pl.jit
    def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(rows // BLOCK):
                ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
                tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
                pl.store(op(ta, tb), [i * BLOCK, 0], c)
        return c
    return kernel


OPS = {"add": (pl.add, np.add), "sub": (pl.sub, np.subtract), "mul": (pl.mul, np.multiply),
       "maximum": (pl.maximum, np.maximum), "minimum": (pl.minimum, np.minimum)}
KERNELS = {name: _blocked(ops[0]) for name, ops in OPS.items()}


@pl.jit
def reuses_a_tile(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor]):
    """ta is read twice (by the add and by a second store): its arena bytes must hold the load."""
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
            pl.store(ta, [i * BLOCK, 0], d)
    return c, d


@pl.jit
def one_block_too_many(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(rows // BLOCK + 1):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
            pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
    return c


def _source(jitted, *args, platform="a2a3sim") -> str:
    config = RunConfig(platform=platform)
    sim = jitted.compile(*args, config=config)._sim_for(config)
    return "\n".join(code.source for code in sim.functions.values())


def _sum(a, b):
    with np.errstate(all="ignore"):
        return a + b


def _data(dtype):
    rng = np.random.default_rng(7)
    if dtype == np.int32:
        big = np.iinfo(np.int32).max
        return (rng.integers(-big, big, (ROWS, COLS), dtype=np.int32, endpoint=True),
                rng.integers(-big, big, (ROWS, COLS), dtype=np.int32, endpoint=True))
    a = rng.standard_normal((ROWS, COLS)).astype(np.float32) * 1e30
    b = rng.standard_normal((ROWS, COLS)).astype(np.float32) * 1e30
    a[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    b[0, :4] = [1.0, -np.inf, np.nan, -0.0]
    return a, b


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("name", sorted(OPS))
def test_a_fused_block_gives_the_ops_bits(name, dtype, platform):
    a, b = _data(dtype)
    c = np.zeros_like(a)
    assert "_fx_run(" in _source(KERNELS[name], a, b, c, platform=platform)
    with np.errstate(all="ignore"):
        want = OPS[name][1](a, b)
    KERNELS[name](a, b, c, config=RunConfig(platform=platform))
    assert c.tobytes() == want.tobytes()


def test_a_tile_read_again_keeps_the_ops_unfused():
    a, b = _data(np.float32)
    c, d = np.zeros_like(a), np.zeros_like(a)
    assert "_fx_run(" not in _source(reuses_a_tile, a, b, c, d)
    reuses_a_tile(a, b, c, d)
    np.testing.assert_array_equal(c, _sum(a, b))
    np.testing.assert_array_equal(d, a)


def test_a_window_outside_the_tensor_fails_as_the_load_does_and_changes_nothing():
    a, b = _data(np.float32)
    c = np.full_like(a, 4.0)
    assert "_fx_run(" in _source(one_block_too_many, a, b, c)
    with pytest.raises(PyptoError, match=r"tile.load: dim 0 window \[32, 40\) is outside the tensor extent 32"):
        one_block_too_many(a, b, c)
    assert (c == 4.0).all()


def test_a_fused_store_counts_for_the_write_back_record(monkeypatch):
    def refuse(*args):
        raise AssertionError("write-back scanned an Out buffer the fused stores covered whole")
    monkeypatch.setattr(host_args, "copy_if_written", refuse)
    a, b = _data(np.float32)
    c = np.zeros_like(a)
    KERNELS["add"](a, b, c)
    np.testing.assert_array_equal(c, _sum(a, b))


def test_the_unfused_fallback_runs_when_the_check_refuses(monkeypatch):
    asked = []
    monkeypatch.setattr(fused_blocks, "run", lambda *args: asked.append(1) and False)
    monkeypatch.setattr(fused_blocks, "run_loop", lambda *args: False)     # (the whole loop's call: test_fused_loops)
    a, b = _data(np.float32)
    c = np.zeros_like(a)
    _blocked(pl.sub)(a, b, c)                 # a new kernel: generated with the refusing helper
    assert len(asked) == ROWS // BLOCK
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(c, a - b)


def test_an_unwritten_output_still_warns_with_fusion():
    @pl.jit
    def top_half(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(rows // BLOCK // 2):
                ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
                tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
                pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
        return c
    a, b = _data(np.float32)
    c = np.full_like(a, 6.0)
    with pytest.warns(PyptoWarning, match=r"within \[16:32, 0:128\]"):
        top_half(a, b, c)
    np.testing.assert_array_equal(c[:16], _sum(a[:16], b[:16]))
    assert (c[16:] == 6.0).all()


def test_a_writable_input_takes_the_unfused_path(monkeypatch):
    """An InOut operand could be changed by a later op before the kernel ends, when the fused group's
    arena tiles are settled from it: such a block runs unfused."""
    answers = []
    real = fused_blocks.run
    monkeypatch.setattr(fused_blocks, "run", lambda *args: answers.append(real(*args)) or answers[-1])

    @pl.jit
    def add_inout(a: pl.InOut[pl.Tensor], b: pl.Tensor, c: pl.Out[pl.Tensor]):
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(rows // BLOCK):
                ta = pl.load(a, [i * BLOCK, 0], [BLOCK, cols])
                tb = pl.load(b, [i * BLOCK, 0], [BLOCK, cols])
                pl.store(pl.add(ta, tb), [i * BLOCK, 0], c)
        return c
    a, b = _data(np.float32)
    c = np.zeros_like(a)
    add_inout(a, b, c)
    assert answers == [False] * (ROWS // BLOCK)
    np.testing.assert_array_equal(c, _sum(a, b))



@pl.program
class LoopThenScratch:
    """`first` adds two blocks in a loop (fused); `second`'s scratch tile sits where `first` loaded q."""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Tensor[[32, 16], pl.FP32],
             mid: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            for i in pl.range(2):
                p = pl.load(x, [i * 16, 0], [16, 16])
                q = pl.load(y, [i * 16, 0], [16, 16])
                mid = pl.store(pl.add(p, q), [i * 16, 0], mid)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
            a = pl.load(mid, [0, 0], [16, 16])
            junk = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            out = pl.store(pl.add(junk, a), [0, 0], out)
        return out


def test_a_fused_kernel_leaves_the_arena_as_its_ops_would(monkeypatch):
    """With the launch poison switched off, `second` reads what `first` left in the arena: the last
    block's q, as when the ops run one by one."""
    import pypto.runtime.sim.contexts as contexts
    fused = []
    real = fused_blocks.run
    monkeypatch.setattr(fused_blocks, "run", lambda *args: fused.append(real(*args)) or fused[-1])
    monkeypatch.setattr(contexts, "poison_fresh", lambda core, code: None)
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    y = x * 10
    mid, out = np.zeros_like(x), np.zeros((16, 16), np.float32)
    run(LoopThenScratch, x, y, mid, out, config=RunConfig())
    assert fused == [True, True]
    np.testing.assert_array_equal(mid, x + y)
    np.testing.assert_array_equal(out, y[16:] + (x[:16] + y[:16]))


def _blocked_kernel_at(addrs: tuple, rows=64, cols=128, block=16):
    """Hand-built final IR: out[i*block:...] = a + b per row block, tiles ta / tb / tc at `addrs`."""
    import simkit as K
    from pypto.ir import BinaryExpr, ConstInt, ForStmt, Function, FunctionType, IterArg, ReturnStmt, ScalarType, \
        SeqStmts, Var, YieldStmt
    from pypto.ir.dtypes import INDEX
    from pypto.ir.enums import ParamDirection
    nbytes = block * cols * 4
    a, b, out = (K.tensor(n, [rows, cols]) for n in ("a", "b", "out"))
    ptrs, allocs = zip(*[K.alloc(f"mem{i}", nbytes, addr) for i, addr in enumerate(addrs)])
    ta, tb, tc = (K.tile_var(n, [block, cols], p) for n, p in zip(("ta", "tb", "tc"), ptrs))
    i, off = Var("i", ScalarType(INDEX)), Var("off", ScalarType(INDEX))
    o_it, st, o_rv = IterArg("o", out.type, out), K.tensor("st", [rows, cols]), K.tensor("o_rv", [rows, cols])
    body = SeqStmts([AssignStmt(off, BinaryExpr("mul", i, ConstInt(block, INDEX)), K.span(20)),
                     K.load(ta, a, (off, 0), (block, cols), 21), K.load(tb, b, (off, 0), (block, cols), 22),
                     K.binary("add", tc, ta, tb, 23), K.store(st, tc, (off, 0), o_it, 24), YieldStmt([st])])
    loop = ForStmt(i, ConstInt(0, INDEX), ConstInt(rows // block, INDEX), ConstInt(1, INDEX), [o_it], body, [o_rv],
                   span=K.span(19))
    kernel = Function("blocked", [a, b, out], [out.type], SeqStmts([*allocs, loop, ReturnStmt([o_rv], K.span(25))]),
                      FunctionType.AIV, param_directions=[ParamDirection.In, ParamDirection.In, ParamDirection.Out])
    program = K.single_kernel_program(kernel, rows, cols)
    from pypto.runtime.compiled_program import CompiledProgram
    from pypto.runtime.sim.program import SimProgram
    compiled = CompiledProgram(program, program)
    compiled._shared["sim"] = SimProgram(program, "a2a3sim", ops=K.OPS)
    return compiled


def test_two_loads_into_shared_bytes_stay_unfused():
    """ta and tb at one address: tb's load overwrites ta, so the ops compute b + b (fusion would give a + b)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 64, 128)).astype(np.float32)
    shared, apart = _blocked_kernel_at((0, 0, 16384)), _blocked_kernel_at((0, 8192, 16384))
    assert "_fx_run(" not in shared._shared["sim"].functions["blocked"].source
    assert "_fx_run(" in apart._shared["sim"].functions["blocked"].source
    out = np.zeros_like(a)
    shared(a, b, out)
    np.testing.assert_array_equal(out, _sum(b, b))
    apart(a, b, out)
    np.testing.assert_array_equal(out, _sum(a, b))
