"""Fresh tile memory: poison at every kernel launch, and the strict mode that reports reads of
bytes no op has written since.

On the chip a kernel's buffers hold whatever the previous task left there. The simulator fills
a kernel's tiles with poison (0xFF: NaN for floats, -1 for ints) when the kernel starts on a
core, so a read of a never-written tile shows up as NaN instead of a lucky stale value.

Strict mode (`RunConfig(sim_strict_memory=True)`) also keeps one "written" flag per arena byte:
each op's destination valid region is marked written, and an op whose tile operand's valid region
contains an unwritten byte raises a SimulationError (the scheduler adds the op and the user's line).
Scratch operands (`tmp`) and the accumulator of a `matmul_acc` with a true init_cond are outputs in
disguise and are not checked.

    ops = strict_ops(SIM_OPS)        # what SimProgram(strict_memory=True) runs
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.runtime.sim.blocking import Block, is_blocking_op, may_block
from pypto.runtime.sim.poison import POISON_BYTE
from pypto.runtime.sim.values import TileValue

_SCRATCH_ARGS = frozenset({"tmp"})
# ops that take a tile operand only for its shape: they fill it without reading its bytes
_SHAPE_ONLY_ARGS = {"tile.expands": 0, "tile.row_expand": 0, "tile.col_expand": 0}


def _span_of(core, tile: TileValue):
    """(flag array of the tile's space on this core, byte offset of the tile in its arena)."""
    arena = core.arena(tile.space)
    offset = tile.data.__array_interface__["data"][0] - arena.__array_interface__["data"][0]
    flags = getattr(core, "written_bytes", None)
    if flags is None:
        flags = core.written_bytes = {}
    buf = flags.get(tile.space)
    if buf is None:
        buf = flags[tile.space] = np.zeros(arena.shape[0], dtype=bool)
    return buf, offset


def _byte_region(buf: np.ndarray, offset: int, tile: TileValue) -> np.ndarray:
    shape = tile.data.shape
    item = tile.data.dtype.itemsize
    nbytes = int(np.prod(shape)) * item
    rows = buf[offset:offset + nbytes].reshape(tuple(shape[:-1]) + (shape[-1] * item,))
    region = tuple(slice(0, v) for v in tile.valid[:-1]) + (slice(0, tile.valid[-1] * item),)
    return rows[region]


def _alloc_ranges(code) -> tuple:
    """(space, addr, size) of every placed tile.alloc of a kernel, computed once per FunctionCode."""
    ranges = getattr(code, "_fresh_ranges", None)
    if ranges is None:
        from pypto.runtime.sim.layout import find_allocs
        ranges = tuple((a.space, a.addr, a.size) for a in find_allocs(code.func).values()
                       if a.addr is not None and a.addr >= 0 and a.size > 0)
        code._fresh_ranges = ranges
    return ranges


def _fresh_fills(core, code) -> tuple:
    """The arena bytes of `code`'s allocations on `core`, as uint8 views (adjacent allocations merged):
    what each launch refills, worked out once per (core, kernel)."""
    fills = core.fresh_fills
    got = fills.get(code.key)
    if got is None:
        merged: list = []
        for space, addr, size in sorted((r for r in _alloc_ranges(code) if r[0] in core.spaces),
                                        key=lambda r: (r[0].value, r[1])):
            if merged and merged[-1][0] is space and addr <= merged[-1][2]:
                merged[-1][2] = max(merged[-1][2], addr + size)
            else:
                merged.append([space, addr, addr + size])
        if len(fills) > 4096:
            fills.clear()
        got = fills[code.key] = tuple(core.arena(space)[lo:hi] for space, lo, hi in merged)
    return got


def poison_fresh(core, code) -> None:
    """A kernel starts on `core`: all of its allocations become poison (and unwritten), including
    tiles placed at run time (slots picked by a loop index). The core's first launch in a run refills
    its whole arenas (Core.poison_if_due), which covers the allocations too."""
    refilled = core.poison_if_due()
    flags = getattr(core, "written_bytes", None)
    if flags is None:
        if not refilled:
            for buf in _fresh_fills(core, code):
                buf.fill(POISON_BYTE)
        return
    for space, addr, size in _alloc_ranges(code):
        if space not in core.spaces:
            continue
        if not refilled:
            core.arena(space)[addr:addr + size] = POISON_BYTE
        if space in flags:
            flags[space][addr:addr + size] = False


def _checked(name: str, fn, arg_names: tuple):
    def run(ctx, out, *args, **kwargs):
        core = getattr(ctx, "core", None)
        if core is not None:
            skip = {i for i, n in enumerate(arg_names) if n.lstrip("*") in _SCRATCH_ARGS}
            if name == "tile.matmul_acc" and len(args) > 3 and args[3]:
                skip.add(0)
            if name in _SHAPE_ONLY_ARGS:
                skip.add(_SHAPE_ONLY_ARGS[name])
            for i, a in enumerate(args):
                if isinstance(a, TileValue) and i not in skip and all(a.valid):
                    buf, offset = _span_of(core, a)
                    if not _byte_region(buf, offset, a).all():
                        label = arg_names[i] if i < len(arg_names) else f"#{i}"
                        raise SimulationError(f"{name} reads its operand '{label}' ({a.space.name} tile "
                                              f"{a.data.shape} {a.data.dtype}), whose valid region holds bytes "
                                              "no op has written (strict memory mode)",
                                              hint="write the tile first (load / create + fill), or check that "
                                                   "two live tiles do not share an address")
        result = fn(ctx, out, *args, **kwargs)
        if result.__class__ is Block:
            return result
        if core is not None and isinstance(out, TileValue) and out.space is not None and name != "tile.create":
            buf, offset = _span_of(core, out)
            _byte_region(buf, offset, out)[...] = True
        return result

    if is_blocking_op(fn):
        run = may_block(run)
    run.__wrapped__ = fn
    return run


def strict_ops(ops: dict) -> dict:
    """The simulator op table with every tile op checking its operands' bytes were written."""
    from pypto.ir.ops.registry import all_ops
    defs = all_ops()
    out = {}
    for name, fn in ops.items():
        op = defs.get(name)
        out[name] = _checked(name, fn, tuple(op.args) if op is not None else ())
    return out
