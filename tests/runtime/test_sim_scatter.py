"""tile.scatter on the simulator follows the reference's DPS semantics: indexed slots take src,
every other slot keeps dst's value, a repeated index keeps its last (row-major) source element,
and dst is read — so scattering into a never-written tile fails in strict memory mode."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.runtime import RunConfig, run


def _program(fill: bool):
    base = ("pl.tile.full([8, 16], dtype=pl.FP32, value=-7.0)" if fill
            else "pl.tile.create([8, 16], dtype=pl.FP32)")
    return pl.parse(f'''
import pypto.language as pl

@pl.program
class Scatter:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[4, 16], pl.FP32], idx: pl.Tensor[[4, 16], pl.INT32],
          out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        base: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = {base}
        s: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.load(src, [0, 0], [4, 16])
        i: pl.Tile[[4, 16], pl.INT32, pl.Mem.Vec] = pl.load(idx, [0, 0], [4, 16])
        d: pl.Tile[[8, 16], pl.FP32, pl.Mem.Vec] = pl.tile.scatter(base, s, i)
        r: pl.Tensor[[8, 16], pl.FP32] = pl.store(d, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[4, 16], pl.FP32], idx: pl.Tensor[[4, 16], pl.INT32],
             out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y: pl.Tensor[[8, 16], pl.FP32] = self.k(src, idx, out)
        return y
''')


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    src = rng.uniform(1, 2, (4, 16)).astype(np.float32)
    idx = rng.choice(8 * 16, size=(4, 16), replace=False).astype(np.int32)
    idx[3, 15] = idx[0, 0]                      # one repeated index: the later element must win
    return src, idx


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_unindexed_slots_keep_dst_and_a_repeated_index_keeps_the_last_element(platform):
    src, idx = _inputs(21)
    out = np.full((8, 16), np.nan, np.float32)
    run(_program(fill=True), src, idx, out, config=RunConfig(platform=platform))
    expected = np.full((8, 16), -7.0, np.float32)
    for (r, c), k in np.ndenumerate(idx):       # sequential, row-major: last writer wins
        expected.flat[k] = src[r, c]
    np.testing.assert_array_equal(out, expected)
    assert (out == -7.0).sum() == 8 * 16 - (4 * 16 - 1)


def test_scattering_into_a_never_written_tile_fails_in_strict_memory_mode():
    src, idx = _inputs(22)
    out = np.zeros((8, 16), np.float32)
    with pytest.raises(SimulationError, match="tile.scatter reads its operand 'dst'"):
        run(_program(fill=False), src, idx, out, config=RunConfig(sim_strict_memory=True))
