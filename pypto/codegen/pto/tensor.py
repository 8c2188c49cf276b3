"""tensor.* ops in PTO codegen (mirrors pypto/ir/ops/tensor.py).

Inside a kernel, ConvertTensorToTileOps has turned every tensor op into tile ops; what is
left on tensors in an orchestration function is host code (pypto/runtime/sim/codegen.py).
Only single-element access survives inside kernels and has an instruction:

    v = pl.tensor.read(t, [i, j])      →  %v = pto.load_scalar %arg0[%off] : !pto.ptr<f32> -> f32
    pl.tensor.write(t, [i, j], v)      →  pto.store_scalar %v, %arg0[%off] : !pto.ptr<f32>, f32
"""

from __future__ import annotations

from pypto.ir.ops import all_ops
from pypto.codegen.pto.registry import emits, lowered_away
from pypto.codegen.pto.tile import _flat_offset
from pypto.codegen.pto.types import ptr_type

_ORCHESTRATION_ONLY = {"tensor.create", "tensor.full", "tensor.slice", "tensor.assemble", "tensor.dim",
                       "tensor.reshape", "tensor.expand_clone", "tensor.no_dep",
                       "tensor.gather", "tensor.scatter"}

_OPS = all_ops()
for _name in _OPS:
    if not _name.startswith("tensor.") or _name in ("tensor.read", "tensor.write", "tensor.view"):
        continue
    if _name in _ORCHESTRATION_ONLY:
        lowered_away(_name, "orchestration-level: host code (orchestration artifact); inside a kernel "
                            "ConvertTensorToTileOps lowers it")
    else:
        target = _OPS[_name].lowers_to or "tile ops"
        lowered_away(_name, f"ConvertTensorToTileOps lowers it to {target} inside kernels")


@emits("tensor.read")
def _read(ctx):
    src, indices = ctx.call.args
    off = _flat_offset(ctx, indices, src.type.shape)
    ctx.emit(f"{ctx.result} = pto.load_scalar {ctx.value(src)}[{off}] : {ptr_type(src.type)} -> {ctx.result_type}")


@emits("tensor.write")
def _write(ctx):
    dst, indices, value = ctx.call.args
    off = _flat_offset(ctx, indices, dst.type.shape)
    ctx.emit(f"pto.store_scalar {ctx.value(value)}, {ctx.value(dst)}[{off}] : {ptr_type(dst.type)}, "
             f"{ctx.type_of(value)}")
    if ctx.result_var is not None:
        ctx.alias_tensor(ctx.result_var, dst)
