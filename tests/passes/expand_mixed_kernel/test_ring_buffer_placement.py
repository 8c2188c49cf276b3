"""AllocateMemoryAddr places `system.reserve_buffer(base=AUTO)`: on a5 the ring sits in the consumer's SRAM
after the kernel's tiles and counts against UB / L1; on a2a3 the ring is in GM and takes no SRAM."""

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import CapacityError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call
from pypto.ir.visitor import collect
from pypto.runtime import RunConfig


def _kernel(slots: int, m: int):
    @pl.jit
    def mm_exp(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.cross_core_slot(slot_num=slots)]):
            z = pl.matmul(a, b, out_dtype=pl.FP32)
            c = pl.assemble(c, pl.exp(z), [0, 0])
        return c
    a = np.ones((m, 32), np.float16)
    b = np.ones((32, 128), np.float16)
    return mm_exp, (a, b, np.zeros((m, 128), np.float32))


def _ring_bases(program):
    found = {}
    for f in program.functions.values():
        for c in collect(f.body, lambda n: isinstance(n, Call) and getattr(n.op, "name", "") == "system.reserve_buffer"):
            found[f.func_type] = (c.kwargs["base"], c.kwargs["size"])
    return found


def test_a5_ring_is_placed_after_the_consumer_tiles():
    kernel, args = _kernel(2, 16)
    lowered = kernel.lower(*args, config=RunConfig(platform="a5sim"))
    bases = _ring_bases(lowered)
    base, size = bases[FunctionType.AIV]  # C2V: the AIV is the consumer
    assert base > 0 and base % 32 == 0 and size == 2 * 16 * 128 * 4
    aiv = next(f for f in lowered.functions.values() if f.func_type is FunctionType.AIV)
    tile_ends = [c.kwargs["addr"] + c.kwargs["size"] for c in
                 collect(aiv.body, lambda n: isinstance(n, Call) and getattr(n.op, "name", "") == "tile.alloc")
                 if c.kwargs["memory_space"].name == "Vec"]
    assert tile_ends and base >= max(tile_ends)


def test_a2a3_ring_lives_in_gm_and_takes_no_sram():
    kernel, args = _kernel(2, 16)
    lowered = kernel.lower(*args, config=RunConfig(platform="a2a3sim"))
    assert all(base == -1 for base, _ in _ring_bases(lowered).values())


def test_a5_ring_that_does_not_fit_ub_is_a_capacity_error():
    kernel, args = _kernel(8, 64)  # ring 8 x 32 KB = 256 KB > the 240 KB UB
    with pytest.raises(CapacityError, match="cross-core ring .* does not fit in Vec \\(UB\\)"):
        kernel.lower(*args, config=RunConfig(platform="a5sim"))
    kernel.lower(*args, config=RunConfig(platform="a2a3sim"))  # the same ring in GM is fine on a2a3
