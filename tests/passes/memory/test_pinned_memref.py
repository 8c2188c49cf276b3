"""User-declared (pinned) allocations: `pl.MemRef("name")` and `pl.MemRef("name", slots=N)[k]` with a
constant or runtime slot index — parsed, printed back, given one pinned tile.alloc per name by
InitMemRef, never packed by MemoryReuse, and placed at real addresses in the simulator."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig, run
from pypto.runtime.compile import compile_program


@pl.program
class Pinned:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        first: pl.Tile[[16, 64], pl.FP32, pl.MemRef("keep"), pl.Mem.Vec] = pl.load(x, [0, 0], [16, 64])
        acc: pl.Tile[[16, 64], pl.FP32] = pl.muls(first, 1.0)          # would take first's bytes if not pinned
        last: pl.Tile[[16, 64], pl.FP32, pl.MemRef("pp", slots=2)[1], pl.Mem.Vec] = pl.load(x, [48, 0], [16, 64])
        for i in pl.range(1, 3):
            blk: pl.Tile[[16, 64], pl.FP32, pl.MemRef("ring", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                x, [i * 16, 0], [16, 64])
            acc = pl.add(acc, blk)
        total: pl.Tile[[16, 64], pl.FP32] = pl.add(acc, last)
        out2: pl.Tensor[[64, 64], pl.FP32] = pl.store(total, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out2 = self.k(x, out)
        return out2


def _memrefs(func) -> dict:
    return {v.name_hint: v.type.memref for v in ir.verifier.defined_vars(func.body)
            if isinstance(v.type, ir.TileType) and v.type.memref is not None}


def test_declarations_print_and_parse_back():
    text = Pinned.as_python()
    assert "pl.MemRef('keep', 0, 4096)" in text and "pl.MemRef('ring', i % 2 * 4096, 8192)" in text
    assert "pl.MemRef('pp', 4096, 8192)" in text
    ir.assert_structural_equal(pl.parse(text), Pinned)


def test_one_pinned_alloc_per_name_and_reuse_packs_nothing_into_it():
    kernel = compile_program(Pinned).lowered["k"]
    allocs = {c.kwargs["addr"]: c for c in collect(kernel.body, lambda n: isinstance(n, ir.Call)
                                                   and not n.is_function_call() and n.op.name == "tile.alloc")}
    pinned = sorted((c.kwargs["size"], c.kwargs["pinned"]) for c in allocs.values() if c.kwargs["pinned"])
    assert pinned == [(4096, True), (8192, True), (8192, True)]           # keep, pp, ring
    refs = _memrefs(kernel)
    assert refs["first"].base.name_hint == "keep" and refs["acc"].base is not refs["first"].base
    assert refs["blk"].base.name_hint == "ring" and not isinstance(refs["blk"].byte_offset, ir.ConstInt)
    assert refs["last"].base.name_hint == "pp" and refs["last"].byte_offset.value == 4096
    assert all(r.base.name_hint not in ("keep", "ring", "pp") for n, r in refs.items()
               if n not in ("first", "blk", "last"))


def test_pinned_tiles_run_at_their_slots():
    x = np.random.default_rng(9).standard_normal((64, 64), dtype=np.float32)
    out = np.zeros_like(x)
    run(Pinned, x, out, config=RunConfig())
    np.testing.assert_allclose(out[:16], x[:16] + x[16:32] + x[32:48] + x[48:], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("annotation, message", [
    ('pl.MemRef("buf")[0]', "has no slots to index"),
    ('pl.MemRef("buf", slots=2)[2]', "slot index out of range"),
    ('pl.MemRef("buf", slots=2)', "needs a slot index"),
])
def test_bad_declarations_are_user_errors(annotation, message):
    text = f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
        a: pl.Tile[[16, 16], pl.FP32, {annotation}, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
"""
    with pytest.raises(PyptoError, match=message):
        pl.parse(text)


@pl.jit
def ring_of_two(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """The slot index names the loop variable of a loop inside `pl.at`, which outlining copies into the kernel."""
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            blk: pl.Tile[[16, 64], pl.FP32, pl.MemRef("ring", slots=2)[i % 2], pl.Mem.Vec] = pl.load(
                x, [i * 16, 0], [16, 64], target_memory=pl.Mem.Vec)
            pl.store(pl.mul(blk, 3.0), [i * 16, 0], out)
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_slot_index_follows_the_loop_variable_into_an_outlined_kernel(platform):
    """Before: the outlined kernel's loop had a fresh `i` while the tile's MemRef offset still named the
    orchestration's, and the simulator failed with a NameError ('i_1') in tile.load."""
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = np.zeros_like(x)
    ring_of_two(x, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, 3 * x)
    config = RunConfig(platform=platform)
    kernel = next(f for f in ring_of_two.compile(x, out, config=config).lowered.functions.values()
                  if f.name.endswith("_incore_0"))
    loop_var = next(n for n in collect(kernel.body, lambda n: isinstance(n, ir.ForStmt))).loop_var
    offsets = [t.type.memref.byte_offset for t in ir.verifier.defined_vars(kernel.body)
               if isinstance(t.type, ir.TileType) and t.type.memref is not None and t.name_hint == "blk"]
    assert offsets and all(any(v is loop_var for v in collect(o, lambda n: isinstance(n, ir.Var)))
                           for o in offsets)
