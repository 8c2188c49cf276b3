"""PTO emitters of the view / valid-region ops (mirrors pypto/ir/ops/view_valid.py).

    tile.set_validshape(x, r, c)  →  pto.set_validshape %x, %r, %c : !pto.tile_buf<...>   (result = %x)
    tile.fillpad_inplace(x)       →  pto.tfillpad ins(%x : ...) outs(%x : ...)

tensor.view re-shapes a GM window; in a kernel that needs a second pto.make_tensor_view over
the same pointer, which the function emitter does only for parameters, so it is a named gap.
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits, not_emitted
from pypto.codegen.pto.types import tile_buf_type


@emits("tile.set_validshape", binds_result=True)
def _set_validshape(ctx):
    src, rows, cols = ctx.call.args
    handle = ctx.value(src)
    ctx.emit(f"pto.set_validshape {handle}, {ctx.index(rows)}, {ctx.index(cols)} : {ctx.type_of(src)}")
    ctx.bind(ctx.result_var, handle, tile_buf_type(ctx.result_var.type))


@emits("tile.fillpad_inplace")
def _fillpad_inplace(ctx):
    ctx.emit_ins_outs("pto.tfillpad")


not_emitted("tensor.view", "a kernel-local re-shaped tensor_view of a GM pointer is not emitted (only parameters "
                           "get pto.make_tensor_view)")
