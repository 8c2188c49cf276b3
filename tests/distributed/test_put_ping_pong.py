"""pld.tensor.put(..., pipeline=True) in a kernel: ConvertTensorToTileOps stages it through two Vec tiles
(the ping-pong pair pto-isa's TPUT alternates between), PTO passes both as buf(%ping, %pong), and the
multi-rank simulator moves the whole region on both platforms."""

from __future__ import annotations

import numpy as np
import pytest

from pypto import ir
from pypto.codegen.pto import generate
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from tests.distributed.test_tensor_put_get import put_program
from tests.helpers import op_calls

N, SHAPE = 2, [8, 64]


def _compile(platform):
    prog = put_program(N, SHAPE, chunk_rows=4, chunk_cols=16, pipeline=True)
    return ir.compile(prog, platform=platform, distributed_config=DistributedConfig(device_ids=list(range(N))))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_pipelined_put_moves_the_whole_region(platform):
    x = np.random.default_rng(3).standard_normal((N, *SHAPE)).astype(np.float32)
    y = np.zeros_like(x)
    _compile(platform)(x, y, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(y, np.roll(x, 1, axis=0))


def test_the_put_carries_both_stages_to_pto():
    lowered = _compile("a2a3sim").lowered
    kern = next(f for name, f in lowered.functions.items() if name.startswith("kern"))
    (put,) = op_calls(kern, "pld.tile.put")
    assert len(put.args) == 5 and [d.value for d in put.args[4].type.shape] == [4, 16]
    line = next(l for l in "\n".join(generate(lowered).values()).splitlines() if "pto.comm.tput(" in l)
    assert line.split("buf(")[1].split(")")[0].count("%") == 2
