"""PTO emitters of the view / valid-region ops (mirrors pypto/ir/ops/view_valid.py).

    tensor.view(t, [1, 24])       →  %v = pto.make_tensor_view %arg0, shape = [1, 24], strides = [24, 1] ...
                                     (result = the same pointer %arg0, described by %v)
    tile.set_validshape(x, r, c)  →  pto.set_validshape %x, %r, %c : !pto.tile_buf<...>   (result = %x)
    tile.fillpad_inplace(x)       →  pto.tfillpad ins(%x : ...) outs(%x : ...)
"""

from __future__ import annotations

from pypto.codegen.pto.registry import emits
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



@emits("tensor.view", binds_result=True)
def _view(ctx):
    """The same GM pointer with a second tensor_view at the new shape (packed row-major, like a parameter's)."""
    var = ctx.result_var
    ptr = ctx.value(ctx.call.args[0])
    ctx.bind_tensor(var, ptr, ctx._tensor_view_of(var, ptr))
