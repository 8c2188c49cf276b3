"""A load / load / elementwise op / store group runs as one numpy call (pypto.runtime.sim.fused_blocks) only
when its tiles are invisible to the rest of the kernel; the results, errors, warnings and write-back
are those of the four ops, and so is the arena the kernel leaves behind."""

import warnings

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError, PyptoWarning
from pypto.ir import AssignStmt
from pypto.runtime import RunConfig, run
from pypto.runtime.sim import fused_blocks, host_args
from pypto.runtime.sim.race_detector import RaceDetector

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


def _data(dtype, rows=ROWS):
    rng = np.random.default_rng(7)
    if dtype == np.int32:
        big = np.iinfo(np.int32).max
        return (rng.integers(-big, big, (rows, COLS), dtype=np.int32, endpoint=True),
                rng.integers(-big, big, (rows, COLS), dtype=np.int32, endpoint=True))
    a = rng.standard_normal((rows, COLS)).astype(np.float32) * 1e30
    b = rng.standard_normal((rows, COLS)).astype(np.float32) * 1e30
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
    """`first` adds two blocks in a loop (fused whole, or block by block); `second`'s scratch tile sits
    where `first` loaded q."""
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Tensor[[32, 16], pl.FP32],
             mid: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            for i in pl.range(2):
                p = pl.load(x, [i * 16, 0], [16, 16])
                q = pl.load(y, [i * 16, 0], [16, 16])
                pl.store(pl.add(p, q), [i * 16, 0], mid)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
            a = pl.load(mid, [0, 0], [16, 16])
            junk = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            out = pl.store(pl.add(junk, a), [0, 0], out)
        return out


@pytest.mark.parametrize("whole", [True, False])
def test_a_fused_kernel_leaves_the_arena_as_its_ops_would(whole, monkeypatch):
    """With the launch poison switched off, `second` reads what `first` left in the arena: the last
    block's q, as when the ops run one by one (the loop as one call, or the group fused per block)."""
    import pypto.runtime.sim.contexts as contexts
    fused = []
    name = "run_loop" if whole else "run"
    real = getattr(fused_blocks, name)
    monkeypatch.setattr(fused_blocks, name, lambda *args: fused.append(real(*args)) or fused[-1])
    if not whole:
        monkeypatch.setattr(fused_blocks, "run_loop", lambda *args: False)
    monkeypatch.setattr(contexts, "poison_fresh", lambda core, code: None)
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    y = x * 10
    mid, out = np.zeros_like(x), np.zeros((16, 16), np.float32)
    run(LoopThenScratch, x, y, mid, out, config=RunConfig())
    assert fused == ([True] if whole else [True, True])
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

# ------------------------------------------------------------------ a whole loop of one group as one call
# (fused_blocks.run_loop: the GM bits, race records, coverage record, warnings and errors of the
# per-block path)

def _stepped(op):
    """Every other column block from the second, with constants in the offsets and b read one block on."""
    @pl.jit
    def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for j in pl.range(1, cols // 16 - 1, 2):
                ta = pl.load(a, [8, j * 16 + 0], [16, 16])
                tb = pl.load(b, [2 + 6, (j + 1) * 16], [16, 16])
                pl.store(op(ta, tb), [16 - 8, 16 * j], c)
        return c
    return kernel


def _overlapping(halved=False):
    """Store windows that overlap (block i writes rows 4i .. 4i + 8): the later block wins, block by block.
    `halved`: a's offset written i * 8 // 2, which is not affine to the code generator (no loop call)."""
    @pl.jit
    def kernel(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(rows // 4 - 1):
                ta = pl.load(a, [i * 8 // 2 if halved else i * 4, 0], [8, cols])
                tb = pl.load(b, [i * 4, 0], [8, cols])
                pl.store(pl.add(ta, tb), [i * 4, 0], c)
        return c
    return kernel


def _run_both(make, monkeypatch, a, b, c0, platform="a2a3sim"):
    """(output bytes, race records, loop calls that fused) fused whole and block by block (a new kernel each)."""
    got = []
    real_loop, real_check = fused_blocks.run_loop, RaceDetector.check
    for refuse in (False, True):
        calls, records = [], []
        fake = (lambda *args: calls.append(False) or False) if refuse else \
            (lambda *args: calls.append(real_loop(*args)) or calls[-1])
        monkeypatch.setattr(fused_blocks, "run_loop", fake)
        monkeypatch.setattr(RaceDetector, "check", lambda self: records.extend(_normal(self.records)) or real_check(self))
        c = c0.copy()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # (a random schedule: a one-task straight run keeps no race records)
            make()(a, b, c, config=RunConfig(platform=platform, sim_schedule="random", sim_seed=0))
        got.append((c.tobytes(), records, [str(w.message) for w in caught], calls))
        monkeypatch.setattr(fused_blocks, "run_loop", real_loop)
    return got


def _normal(records):
    """Race records with tasks and arrays named by first appearance (they are new objects each run)."""
    names: dict = {}
    out = []
    for task, tensor, window, write in records:
        key = (names.setdefault(id(task), len(names)), names.setdefault(id(tensor), len(names)))
        out.append((key, tuple((s.start, s.stop) for s in window), write))
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("shape", ["rows", "stepped"])
def test_a_fused_loop_gives_the_per_block_bits_and_records(shape, name, dtype, platform, monkeypatch):
    a, b = _data(dtype)
    c0 = np.full_like(a, 3)
    make = (lambda: _blocked(OPS[name][0])) if shape == "rows" else (lambda: _stepped(OPS[name][0]))
    fused, blockwise = _run_both(make, monkeypatch, a, b, c0, platform)
    assert fused[3] == [True] and blockwise[3] == [False]
    assert fused[:3] == blockwise[:3]
    assert len(fused[1]) == 3 * (ROWS // BLOCK if shape == "rows" else 3)
    with np.errstate(all="ignore"):
        want = OPS[name][1](a, b)
    c = np.frombuffer(fused[0], dtype).reshape(a.shape)
    if shape == "rows":
        assert c.tobytes() == want.tobytes()
    else:
        assert fused[2] and "was not written" in fused[2][0]       # the gaps keep the caller's 3s
        for j in (1, 3, 5):
            with np.errstate(all="ignore"):
                expect = OPS[name][1](a[8:24, j * 16:j * 16 + 16], b[8:24, j * 16 + 16:j * 16 + 32])
            assert c[8:24, j * 16:j * 16 + 16].tobytes() == expect.tobytes()
        assert (c[:8] == 3).all() and (c[:, :16] == 3).all() and (c[:, 32:48] == 3).all()


def test_the_generated_code_has_the_loop_call():
    a, b = _data(np.float32)
    assert "_fx_loop(" in _source(_blocked(pl.add), a, b, np.zeros_like(a))


def test_a_ragged_tail_left_unwritten_warns(monkeypatch):
    a, b = _data(np.float32, rows=36)
    c = np.full_like(a, 5.0)
    fused, blockwise = _run_both(lambda: _blocked(pl.add), monkeypatch, a, b, c)
    assert fused[3] == [True] and fused[:3] == blockwise[:3]
    assert "within [32:36, 0:128]" in fused[2][0]


def test_overlapping_store_windows_run_block_by_block(monkeypatch):
    a, b = _data(np.float32)
    c = np.zeros_like(a)
    fused, blockwise = _run_both(_overlapping, monkeypatch, a, b, c)
    assert fused[3] == [False]                  # refused: the per-block path ran
    assert fused[:3] == blockwise[:3]
    got = np.frombuffer(fused[0], np.float32).reshape(a.shape)
    np.testing.assert_array_equal(got[4:8], _sum(a[4:8], b[4:8]))     # block 1 overwrote block 0's rows 4..8


def test_a_square_of_the_loop_variable_is_not_affine():
    @pl.jit
    def squares(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        rows, cols = a.shape
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(3):
                ta = pl.load(a, [i * i * 4, 0], [4, cols])
                tb = pl.load(b, [i * i * 4, 0], [4, cols])
                pl.store(pl.add(ta, tb), [i * i * 4, 0], c)
        return c
    a, b = _data(np.float32)
    c = np.zeros_like(a)
    assert "_fx_loop(" not in _source(squares, a, b, c)
    with pytest.warns(PyptoWarning):
        squares(a, b, c)
    for row in (0, 4, 16):
        np.testing.assert_array_equal(c[row:row + 4], _sum(a[row:row + 4], b[row:row + 4]))


def test_an_offset_not_affine_in_the_loop_variable_keeps_the_loop_block_by_block():
    a, b = _data(np.float32)
    text = _source(_overlapping(halved=True), a, b, np.zeros_like(a))
    assert "_fx_run(" in text and "_fx_loop(" not in text


class _Ctx:
    class run:
        race = None


def _loop(a, b, c, f0=(0, 0, 0, 0, 0, 0), f1=(8, 0, 8, 0, 8, 0), n=4):
    return fused_blocks.run_loop(_Ctx, np.add, a, b, c, f0, f1, n, 8, 16, np.dtype(np.float32), {}, 0, None)


def _readonly(x):
    v = x.view()
    v.setflags(write=False)
    return v


def test_run_loop_refuses_what_it_cannot_prove():
    a, b = (_readonly(np.ones((32, 16), np.float32)) for _ in range(2))
    base = np.zeros((32, 16), np.float32)
    assert _loop(a, b, base)
    np.testing.assert_array_equal(base, 2)
    assert not _loop(_readonly(base), b, base)                       # the output aliases an operand
    assert not _loop(a.copy(), b, np.zeros_like(base))               # a writable operand
    assert not _loop(a, b, _readonly(base))                          # a read-only output
    assert not _loop(a, b, np.zeros((32, 16), np.float64))           # another dtype
    assert not _loop(a, b, np.zeros_like(base), n=5)                 # the last window outside
    for k in range(6):                                               # one operand's first or last window outside
        f0, f1 = [0, 0, 0, 0, 0, 0], [8, 0, 8, 0, 8, 0]
        f0[k] -= 1 if k % 2 else 1
        f1[k] -= 1 if k % 2 else 1
        assert not _loop(a, b, np.zeros_like(base), tuple(f0), tuple(f1)), k
        assert not _loop(a, b, np.zeros((31, 16), np.float32), f1=(8, 0, 8, 0, 8, 0)) if k == 4 else True
    assert not _loop(a, b, np.zeros_like(base), f0=(0, 0, 0, 0, 0, 0), f1=(8, 0, 8, 0, 4, 0))   # overlapping stores
    assert not _loop(a, b, np.zeros_like(base), f1=(8.0, 0, 8, 0, 8, 0))                       # a float offset
    c = np.zeros_like(base)
    assert _loop(a, b, c, f0=(24, 0, 24, 0, 24, 0), f1=(16, 0, 16, 0, 16, 0))   # backwards: blocks 24, 16, 8, 0
    np.testing.assert_array_equal(c, 2)
