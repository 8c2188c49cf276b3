"""No memory growth across 1,000 compiles of different shapes (a jit service compiling many
specializations must not keep anything per compile). Before the traversal engine kept its
dispatch tables on the visitor classes, every compile left ~300 KB behind (a global hook cache
holding each per-call visitor class): tens of MB over this test."""

import gc
import sys
import tracemalloc

import pypto.language as pl
from pypto.passes import PassContext, PassManager, VerificationLevel

_SRC = '''
import pypto.language as pl


@pl.program
class Tiny:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{r}, {c}], pl.FP32], out: pl.Out[pl.Tensor[[{r}, {c}], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [0, 0], [{r}, {c}])
            out = pl.store(pl.add(t, t), [0, 0], out)
        return out
'''


def _compile(k: int) -> None:
    """Shape k of 1,024 distinct ones, through the frontend and the pass pipeline (BASIC checks)."""
    program = pl.parse(_SRC.format(r=1 + k % 32, c=16 * (1 + k // 32 % 32)))
    with PassContext(verification_level=VerificationLevel.BASIC, platform="a2a3"):
        lowered = PassManager.get_strategy().run_passes(program)
    assert any(f.name.startswith("main_incore") for f in lowered.functions.values())


def test_a_thousand_compiles_of_different_shapes_keep_no_memory():
    for k in range(100):                      # fill every cache keyed by classes / op names
        _compile(k)
    gc.collect()
    blocks = sys.getallocatedblocks()
    for k in range(100, 970):
        _compile(k)
    gc.collect()
    grown_blocks = sys.getallocatedblocks() - blocks
    tracemalloc.start(1)
    try:
        gc.collect()
        before = tracemalloc.take_snapshot()
        for k in range(970, 1000):
            _compile(k)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = after.compare_to(before, "traceback")
    grown_bytes = sum(st.size_diff for st in grown)
    top = "\n".join(f"{st.size_diff:+d} B  {st.traceback.format()[-1].strip()}" for st in grown[:5])
    # the old leak: ~2,000 blocks and ~300 KB per compile
    assert grown_blocks < 5_000, f"{grown_blocks} memory blocks more after 870 compiles"
    assert grown_bytes < 64 * 1024, f"{grown_bytes} B more after 30 traced compiles; largest:\n{top}"
