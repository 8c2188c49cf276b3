"""Numpy semantics of the tile.* ops (mirrors pypto/ir/ops/tile.py).

Every function is `fn(ctx, out, *args, **kwargs)`: tile operands are TileValues, GM tensors
numpy arrays, scalars Python numbers, list arguments tuples. An op reads only its operands'
valid regions, writes only out's valid region, sets `out.valid` and returns `out` (or the
tensor / scalar it produces). One numpy expression per op over the whole region.
"""

from __future__ import annotations

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.enums import AtomicType, CastMode, CmpType, PadValue
from pypto.runtime.sim.ops.cast import cast_array
from pypto.runtime.sim.out_coverage import note_load
from pypto.runtime.sim.race_detector import note_gm
from pypto.runtime.sim.ops.numeric import fill_outside, is_float, pad_scalar, scalar_as, widen, write_valid


def _window(shape: tuple, offsets: tuple, extents: tuple, what: str) -> tuple:
    """The index tuple of a GM window, bounds-checked like the DMA engine would fault."""
    for d, (o, e, n) in enumerate(zip(offsets, extents, shape)):
        if e < 0:
            raise SimulationError(f"{what}: dim {d} has a negative extent {e}",
                                  hint="a valid shape computed at run time must be zero or more")
        if o < 0 or o + e > n:
            raise SimulationError(f"{what}: dim {d} window [{o}, {o + e}) is outside the tensor extent {n}",
                                  hint="check the offsets and valid shapes against the tensor's shape")
    return tuple(slice(int(o), int(o) + int(e)) for o, e in zip(offsets, extents))


def _pad_of(ctx, kwargs) -> PadValue:
    """The destination tile's pad value: passed as pad=..., else read from ctx.result_type."""
    pad = kwargs.get("pad")
    if pad is None:
        view = getattr(getattr(ctx, "result_type", None), "tile_view", None)
        pad = view.pad if view is not None else PadValue.null
    return pad


# ---------------------------------------------------------------------------- data movement
def load(ctx, out, tensor, offsets, shapes, valid_shapes, tile_shape=None, **kwargs):
    window = _window(tensor.shape, offsets, valid_shapes, "tile.load")
    if tile_shape is None and any(int(v) > int(s) for v, s in zip(valid_shapes, shapes)):
        raise SimulationError(f"tile.load: valid shape {[int(v) for v in valid_shapes]} exceeds the tile shape "
                              f"{[int(s) for s in shapes]}", hint="the valid shape must fit inside the shape")
    note_gm(ctx, tensor, window, False)
    note_load(tensor)
    src = tensor[window]
    if tile_shape is not None:        # flattened: the window's rows, row-major, are the tile's rows
        src = src.reshape(int(np.prod(src.shape[:-1])), src.shape[-1])
    write_valid(out, src)
    fill_outside(out.data, out.valid, pad_scalar(_pad_of(ctx, kwargs), out.data.dtype))
    return out


def store(ctx, out, tile, offsets, output_tensor, shapes=None, atomic=AtomicType.None_, **kwargs):
    value = tile.view()
    if shapes is not None:            # flattened: the tile's valid rows fill the N-D window row-major
        shapes = tuple(int(s) for s in shapes)
        if value.shape != (int(np.prod(shapes[:-1])), shapes[-1]):
            raise SimulationError(f"tile.store: the tile's valid region {tile.valid} is not the N-D window {shapes} "
                                  "flattened row-major", hint="the valid rows must be the window's rows")
        value = value.reshape(shapes)
    window = _window(output_tensor.shape, offsets, value.shape, "tile.store")
    if atomic is not AtomicType.Add:          # atomic adds commute: never a race between tasks
        note_gm(ctx, output_tensor, window, True)
    if atomic is AtomicType.Add:
        # one op is one indivisible step of the scheduler, so concurrent cores' adds never interleave
        output_tensor[window] = (output_tensor[window].astype(np.float64 if is_float(output_tensor.dtype) else np.int64)
                                 + value).astype(output_tensor.dtype)
    else:
        output_tensor[window] = value.astype(output_tensor.dtype, copy=False)
    return output_tensor


def move(ctx, out, tile, **kwargs):
    return write_valid(out, tile.view())


def create(ctx, out, shape, **kwargs):
    out.valid = out.data.shape        # contents stay whatever the arena holds (poison when fresh)
    return out


def full(ctx, out, shape, dtype=None, value=0, **kwargs):
    # out.valid stays the result type's valid region (LowerCompositeOps may narrow a tile.full's view)
    out.data[...] = scalar_as(value, out.data.dtype)
    return out


def alloc(ctx, out, memory_space=None, size=0, addr=-1, **kwargs):
    return addr                       # placement itself is bound statically by the simulator


# ---------------------------------------------------------------------------- elementwise
# The regular elementwise, reduction and broadcast ops get their semantics from their OpDef's
# numpy function (pypto/runtime/sim/ops/elementwise.py); tile.sin / tile.cos have none:
# LowerCompositeOps expands them (sim/ops/composite.py rejects leftovers).


def cast(ctx, out, x, target_type=None, mode=CastMode.round, **kwargs):
    return write_valid(out, cast_array(x.view(), out.data.dtype, mode))


_CMP = {CmpType.EQ: np.equal, CmpType.NE: np.not_equal, CmpType.LT: np.less, CmpType.LE: np.less_equal,
        CmpType.GT: np.greater, CmpType.GE: np.greater_equal}


def _packed(out, truth: np.ndarray):
    # the packed predicate mask: element j of a row → bit j % 8 (LSB first) of byte j // 8
    return write_valid(out, np.packbits(truth, axis=-1, bitorder="little"))


def cmp(ctx, out, lhs, rhs, cmp_type=CmpType.EQ, **kwargs):
    with np.errstate(all="ignore"):
        return _packed(out, _CMP[cmp_type](widen(lhs.view()), widen(rhs.data[lhs.region])))


def cmps(ctx, out, lhs, rhs, cmp_type=CmpType.EQ, **kwargs):
    with np.errstate(all="ignore"):
        return _packed(out, _CMP[cmp_type](widen(lhs.view()), scalar_as(rhs, lhs.data.dtype)))


# ---------------------------------------------------------------------------- broadcasts
def expands(ctx, out, target, scalar, **kwargs):
    return write_valid(out, np.full(target.valid, scalar_as(scalar, target.data.dtype)))


# ---------------------------------------------------------------------------- shape and view
def reshape(ctx, out, x, shape, **kwargs):
    """The type rule allows a partly valid source only as a row prefix (full trailing axes) whose
    elements are whole result rows, so the result is valid on the same elements: that many rows."""
    full = out.data.shape
    valid = full
    if tuple(x.valid) != tuple(x.data.shape):
        if tuple(x.valid[1:]) != tuple(x.data.shape[1:]):
            raise SimulationError(f"tile.reshape of a tile whose valid region {x.valid} is not a row prefix of "
                                  f"{x.data.shape}")
        row = int(np.prod(full[1:], dtype=np.int64))
        count = int(np.prod(x.valid, dtype=np.int64))
        if count % row:
            raise SimulationError(f"tile.reshape: the {count} valid elements of {x.data.shape} are not whole rows "
                                  f"of {full}")
        valid = (count // row, *full[1:])
    # numpy copies through a temporary when out aliases x (reshape usually runs in place)
    out.data[...] = x.data.reshape(full)
    out.valid = tuple(int(v) for v in valid)
    return out


def transpose(ctx, out, x, axis1, axis2, tmp=None, **kwargs):
    return write_valid(out, np.swapaxes(x.view(), int(axis1), int(axis2)))


def concat(ctx, out, src0, src1, **kwargs):
    rows = min(src0.valid[0], src1.valid[0])
    return write_valid(out, np.concatenate([src0.view()[:rows], src1.view()[:rows]], axis=1))


def transpose_view(ctx, out, x, **kwargs):
    # a zero-copy layout flip on hardware; tiles are logically row-major here, so it is a transpose
    return write_valid(out, np.swapaxes(x.view(), -1, -2))


def _inside_tile(what: str, offsets, extents, tile_shape) -> None:
    """An on-chip window must lie inside the tile's buffer (numpy would clip it silently)."""
    for d, (o, e, n) in enumerate(zip(offsets, extents, tile_shape)):
        if int(e) < 0 or int(o) < 0 or int(o) + int(e) > n:
            raise SimulationError(f"{what}: dim {d} window [{int(o)}, {int(o) + int(e)}) is outside the tile's "
                                  f"extent {n}", hint="check the offsets (e.g. a loop bound) against the tile's shape")


def slice_(ctx, out, x, shape, offset, valid_shape=None, **kwargs):
    _inside_tile("tile.slice", offset, shape, x.data.shape)
    valid = tuple(valid_shape) if valid_shape is not None else tuple(shape)
    # the window's valid part cannot reach past the source's valid region
    valid = tuple(max(0, min(v, xv - o)) for v, xv, o in zip(valid, x.valid, offset))
    region = tuple(slice(int(o), int(o) + v) for o, v in zip(offset, valid))
    out = write_valid(out, x.data[region], valid)
    if kwargs.get("pad_value") is not None:     # the window's pad fills what lies outside its valid region
        fill_outside(out.data, out.valid, pad_scalar(kwargs["pad_value"], out.data.dtype))
    return out


def assemble(ctx, out, target, source, offset, **kwargs):
    if out.data is not target.data and not np.shares_memory(out.data, target.data):
        out.data[...] = target.data
    _inside_tile("tile.assemble", offset, source.valid, out.data.shape)
    region = tuple(slice(int(o), int(o) + v) for o, v in zip(offset, source.valid))
    out.data[region] = source.view().astype(out.data.dtype, copy=False)
    out.valid = target.valid
    return out


def fillpad(ctx, out, x, pad_value=PadValue.zero, **kwargs):
    if out.data is not x.data:
        out.data[...] = x.data
    fill_outside(out.data, x.valid, pad_scalar(pad_value, out.data.dtype))
    out.valid = out.data.shape
    return out


def read(ctx, out, src, indices, **kwargs):
    return src.data[tuple(int(i) for i in indices)].item()


def write(ctx, out, dst, indices, value, **kwargs):
    if out is not None and out.data is not dst.data and not np.shares_memory(out.data, dst.data):
        out.data[...] = dst.data
    target = out if out is not None else dst
    target.data[tuple(int(i) for i in indices)] = scalar_as(value, target.data.dtype)
    target.valid = dst.valid
    return target


# ---------------------------------------------------------------------------- select and matmul
def _mask_bits(mask, shape: tuple) -> np.ndarray:
    """Unpack the packed predicate (bit j % 8 of byte j // 8, LSB first) to booleans of `shape`."""
    leading = tuple(slice(0, n) for n in shape[:-1])     # valid rows (any rank >= 1)
    bits = np.unpackbits(mask.data[leading], axis=-1, bitorder="little")
    return bits[..., :shape[-1]].astype(bool)


def sel(ctx, out, mask, lhs, rhs, tmp=None, **kwargs):
    a = lhs.view()
    return write_valid(out, np.where(_mask_bits(mask, a.shape), a, rhs.data[lhs.region]))


def sels(ctx, out, mask, src, tmp=None, scalar=0, **kwargs):
    a = widen(src.view())
    return write_valid(out, np.where(_mask_bits(mask, a.shape), a, scalar_as(scalar, src.data.dtype)))


def _product(lhs, rhs) -> np.ndarray:
    """lhs [M, K] × rhs [K, N] over lhs's valid K, accumulated in FP32 (float inputs) or INT32 / INT64
    (integer inputs), as the cube unit's accumulator does."""
    a, k = lhs.view(), lhs.valid[1]
    b = rhs.data[:k, :rhs.valid[1]]
    acc = np.float32 if is_float(a.dtype) else np.int64
    return a.astype(acc) @ b.astype(acc)


def matmul(ctx, out, lhs, rhs, **kwargs):
    return write_valid(out, _product(lhs, rhs))


def matmul_acc(ctx, out, acc, lhs, rhs, init_cond=None, **kwargs):
    product = _product(lhs, rhs)
    if init_cond:                      # a true init_cond starts a fresh accumulation
        return write_valid(out, product)
    rows, cols = product.shape
    return write_valid(out, acc.data[:rows, :cols].astype(product.dtype) + product)


def matmul_bias(ctx, out, lhs, rhs, bias, **kwargs):
    product = _product(lhs, rhs)
    return write_valid(out, product + bias.data[:1, :product.shape[1]].astype(product.dtype))


def table() -> dict:
    return {"tile.load": load, "tile.store": store, "tile.move": move, "tile.create": create, "tile.full": full,
            "tile.alloc": alloc, "tile.cast": cast, "tile.cmp": cmp, "tile.cmps": cmps, "tile.expands": expands,
            "tile.reshape": reshape, "tile.transpose": transpose, "tile.transpose_view": transpose_view,
            "tile.slice": slice_, "tile.assemble": assemble, "tile.concat": concat, "tile.fillpad": fillpad,
            "tile.read": read, "tile.write": write, "tile.sel": sel, "tile.sels": sels, "tile.matmul": matmul,
            "tile.matmul_acc": matmul_acc, "tile.matmul_bias": matmul_bias}
