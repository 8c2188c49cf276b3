"""Specialized forms of the hottest tile ops, chosen at code-generation time.

The final IR fixes every tile's shape, dtype and placement, so for the common case — a 2-D
load or store of a whole tile, an FP32 / INT32 elementwise op on whole tiles — the generated
code can call a tiny helper instead of the general SIM_OPS function. Each helper checks at
run time that the case really is the simple one (window inside the tensor, operands' valid
regions are the whole tile) and otherwise calls the general op, which computes the same thing
or raises its usual error. So the result is bit-identical to SIM_OPS; only the Python overhead
per op shrinks (the simulator's speed budget: a few microseconds per tile op).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from pypto.ir.dtypes import FP32, INT32
from pypto.ir.expr import Call, ConstInt, MakeTuple
from pypto.ir.ops.registry import all_ops
from pypto.ir.types import TensorType, TileType, static_dims
from pypto.runtime.sim.out_coverage import _TRACKED, note_load, note_store
from pypto.runtime.sim.race_detector import note_gm

_FAST_DTYPES = (FP32, INT32)


def load_2d(out, tensor, o0, o1, r, c, full, slow, args, kwargs):
    if 0 <= o0 and 0 <= o1 and o0 + r <= tensor.shape[0] and o1 + c <= tensor.shape[1]:
        race = args[0].run.race                 # args[0] is the kernel's _sim_ctx
        if race is not None:
            note_gm(args[0], tensor, (slice(o0, o0 + r), slice(o1, o1 + c)), False, race)
        if _TRACKED:
            note_load(tensor)
        out.data[...] = tensor[o0:o0 + r, o1:o1 + c]
        out.valid = full
        return out
    return slow(*args, **kwargs)


def store_2d(tile, o0, o1, tensor, full, slow, args, kwargs):
    r, c = full
    if tile.valid == full and 0 <= o0 and 0 <= o1 and o0 + r <= tensor.shape[0] and o1 + c <= tensor.shape[1]:
        race = args[0].run.race
        if race is not None:
            note_gm(args[0], tensor, (slice(o0, o0 + r), slice(o1, o1 + c)), True, race)
        tensor[o0:o0 + r, o1:o1 + c] = tile.data
        if _TRACKED:                            # (an Out buffer's written windows: write-back may skip its scan)
            note_store(tensor, o0, o1, r, c)
        return tensor
    return slow(*args, **kwargs)


def binary(ufunc):
    def run(out, lhs, rhs, full, slow, args, kwargs):
        if lhs.valid == full and rhs.valid == full:
            ufunc(lhs.data, rhs.data, out=out.data)
            out.valid = full
            return out
        return slow(*args, **kwargs)
    run.ufunc = ufunc
    return run


# Every two-operand elementwise op whose numpy semantics is a ufunc (derived from the op definitions):
# on same-dtype FP32 / INT32 operands the general op computes exactly ufunc(lhs, rhs), so calling the
# ufunc in place is bit-identical.
_BINARY = {op.name: binary(op.numpy) for op in all_ops().values()
           if op.numpy_form == "binary" and isinstance(op.numpy, np.ufunc) and len(op.args) == 2}


def _static_tuple(e) -> Optional[tuple]:
    if isinstance(e, MakeTuple) and all(isinstance(x, ConstInt) for x in e.elements):
        return tuple(x.value for x in e.elements)
    return None


def _plain_store(kwargs: dict) -> bool:
    """No options, or only atomic=None_ (what the parser spells out for a plain pl.store)."""
    from pypto.ir.enums import AtomicType
    return set(kwargs) <= {"atomic"} and kwargs.get("atomic", AtomicType.None_) is AtomicType.None_


def plan(call: Call, out_type) -> Optional[tuple]:
    """(helper, static args) when `call` qualifies for a fast path, else None.

    The generated code calls `helper(<out>, <dynamic operands>, *static, slow, args, kwargs)`.
    """
    name = call.op.name
    if not isinstance(out_type, TileType) and name != "tile.store":
        return None
    if name == "tile.load":
        tensor_t = call.args[0].type
        shape, valid = _static_tuple(call.args[2]), _static_tuple(call.args[3])
        phys = static_dims(out_type.shape)
        if (isinstance(tensor_t, TensorType) and len(tensor_t.shape) == 2 and shape is not None and shape == valid
                and shape == phys and tensor_t.dtype is out_type.dtype and len(call.args[1].elements) == 2
                and set(call.kwargs) <= {"target_memory"}):
            return load_2d, (shape[0], shape[1], shape)
        return None
    if name == "tile.store":
        tile_t = call.args[0].type
        tensor_t = call.args[2].type
        phys = static_dims(tile_t.shape) if isinstance(tile_t, TileType) else None
        if (phys is not None and len(phys) == 2 and isinstance(tensor_t, TensorType) and len(tensor_t.shape) == 2
                and tensor_t.dtype is tile_t.dtype and isinstance(call.args[1], MakeTuple)
                and len(call.args[1].elements) == 2 and _plain_store(call.kwargs)):
            return store_2d, (phys,)
        return None
    if name in _BINARY:
        a, b = call.args[0].type, call.args[1].type
        phys = static_dims(out_type.shape)
        if (isinstance(a, TileType) and isinstance(b, TileType) and a.dtype is b.dtype is out_type.dtype
                and a.dtype in _FAST_DTYPES and static_dims(a.shape) == static_dims(b.shape) == phys
                and not call.kwargs):
            return _BINARY[name], (phys,)
    return None


def emit(gen, lhs: str, var, call: Call, out: str, ind: int, where) -> bool:
    """Emit the helper call for `call` into the code generator `gen`; False when it does not qualify.

    The helper gets the fast operands, the static facts, and the general op with its full
    argument tuple (`slow`, `args`, `kwargs`) for the cases it must hand back.
    """
    target_type = var.type if var is not None else call.type
    planned = plan(call, target_type)
    name = call.op.name
    if planned is None or (out == "None" and name != "tile.store"):
        return False
    helper, static = planned
    hname = f"_fp_{name.replace('.', '_')}"
    gen.g[hname] = helper
    gen.g["_sim_nokw"] = {}
    _fn, slow = gen.op_fn(call)
    kw = gen.const(dict(call.kwargs), "kw") if call.kwargs else "_sim_nokw"
    if name in ("tile.load", "tile.store"):
        offs = []
        for k, e in enumerate(call.args[1].elements):      # evaluate each offset once
            text = gen.expr(e)
            if not (text.isidentifier() or text.lstrip("-").isdigit()):
                gen.emit(ind, f"_sim_o{k} = {text}", name, where)
                text = f"_sim_o{k}"
            offs.append(text)
        args = [gen.expr(a) for a in call.args]
        args[1] = gen.tuple_text(offs)
        slow_args = gen.tuple_text(["_sim_ctx", out, *args])
        if name == "tile.load":
            r, c, full = static
            text = f"{hname}({out}, {args[0]}, {offs[0]}, {offs[1]}, {r}, {c}, {full!r}, {slow}, {slow_args}, {kw})"
        else:
            (full,) = static
            text = f"{hname}({args[0]}, {offs[0]}, {offs[1]}, {args[2]}, {full!r}, {slow}, {slow_args}, {kw})"
    else:
        (full,) = static
        a, b = (gen.expr(x) for x in call.args)
        text = f"{hname}({out}, {a}, {b}, {full!r}, {slow}, (_sim_ctx, {out}, {a}, {b}), {kw})"
    gen.emit(ind, f"{lhs}{text}", name, where)
    return True
