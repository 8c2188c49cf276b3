"""Expressions, assignments, annotations and sugar: what IR each DSL form produces."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import FP32, INDEX, INT32
from pypto.ir.expr import BinaryExpr, Call, ConstFloat, ConstInt, TupleGetItem, UnaryExpr, Var
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.verifier import verify_property

TILE = 16
SCALE = 0.5


def stmts(fn):
    return ir.flatten_to_stmts(fn.body)


def assigns(fn):
    return [s for s in stmts(fn) if isinstance(s, AssignStmt)]


def test_pl_namespace_exposes_dtypes_enums_annotations_and_ops():
    assert pl.FP32 is FP32 and pl.INDEX is INDEX and pl.BF16.name == "BF16"
    assert pl.Mem is pl.MemorySpace and pl.Mem.Vec.name == "Vec"
    assert pl.ND is pl.TensorLayout.ND and pl.NZ is pl.TensorLayout.NZ
    assert pl.Tensor[[64, 32], pl.FP16] == TensorType([64, 32], pl.FP16) or \
        ir.structural_equal(pl.Tensor[[64, 32], pl.FP16], TensorType([64, 32], pl.FP16))
    assert isinstance(pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec], TileType)
    assert pl.Scalar[pl.INT32].dtype is INT32
    assert isinstance(pl.dynamic("N"), Var)
    assert pl.tile.add.path == "tile.add" and pl.add.path == "add"
    assert "load" in dir(pl.tile)
    for name in ("FunctionType", "Level", "Role", "TileLayout", "PadValue", "SplitMode", "ForKind", "CastMode",
                 "CmpType", "AtomicType", "ParamDirection", "range", "parallel", "unroll", "pipeline", "while_",
                 "cond", "yield_", "at", "cluster", "spmd", "split_aiv", "split", "static_print", "static_assert",
                 "program", "function", "inline", "parse", "parse_program", "loads", "loads_program", "const"):
        assert hasattr(pl, name), name


def test_annotations_set_var_and_call_types_and_ops_dispatch_on_operands():
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [64, 64])
        u = pl.add(t, t)
        v = t * 2.0
        w = x + x
        return w
    t, u, v, w = assigns(k)
    assert t.value.op.name == "tile.load" and t.var.type.memory_space is pl.Mem.Vec
    assert t.value.type is t.var.type
    assert u.value.op.name == "tile.add"
    assert v.value.op.name == "tile.muls" and isinstance(v.value.args[1], ConstFloat)
    assert w.value.op.name == "tensor.add"


def test_scalar_arithmetic_folds_constants_and_builds_binary_exprs():
    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        a = n * (TILE * 2) + 1
        b = -n
        c = pl.min(a, 8)
        d = pl.cast(a, pl.INT32)
        e = a // 4 % 3
        return e
    a, b, c, d, e = assigns(f)
    assert isinstance(a.value, BinaryExpr) and a.value.op == "add"
    assert a.value.lhs.op == "mul" and a.value.lhs.rhs.value == 32     # 16 * 2 folded at parse time
    assert isinstance(b.value, UnaryExpr) and b.value.op == "neg"
    assert c.value.op == "min"
    assert isinstance(d.value, UnaryExpr) and d.value.op == "cast" and d.var.type.dtype is INT32
    assert e.value.op == "floormod" and e.value.lhs.op == "floordiv"


def test_compile_time_values_stay_python_and_fold():
    @pl.function
    def f(x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        rows = TILE * 2
        M, N = x.shape
        t = pl.load(x, [0, 0], [rows, N // 2])
        s = pl.mul(t, SCALE)
        return x
    t, s = assigns(f)
    assert t.var.type.shape[0].value == 32 and t.var.type.shape[1].value == 32
    assert s.value.args[1].value == 0.5


def test_subscript_sugar_slice_read_and_assemble():
    @pl.function(type=pl.FunctionType.Opaque)
    def f(a: pl.Tensor[[64, 64], pl.FP32], o: pl.Tensor[[64, 64], pl.FP32], i: pl.Scalar[pl.INDEX]) \
            -> pl.Tensor[[64, 64], pl.FP32]:
        part = a[0:16, :]
        moving = a[i:i + 16, 0:32]
        elem = a[1, 2]
        o[16:32, :] = part
        o[:] = a
        return o
    part, moving, elem, asm1, asm2 = assigns(f)
    assert part.value.op.name == "tensor.slice"
    assert [d.value for d in part.var.type.shape] == [16, 64]
    assert [d.value for d in moving.var.type.shape] == [16, 32]
    assert elem.value.op.name == "tensor.read" and isinstance(elem.var.type, ScalarType)
    # the sugar writes into the parameter: a new SSA binding of the same name, assembled from the parameter
    assert asm1.value.op.name == "tensor.assemble" and asm1.value.args[0] is f.params[1]
    assert asm1.var is not f.params[1] and asm1.var.name_hint == "o" and asm2.value.args[0] is asm1.var
    assert [e.value for e in asm1.value.args[2].elements] == [16, 0]
    assert [e.value for e in asm2.value.args[2].elements] == [0, 0]


@pytest.mark.parametrize("target", ["o[i:i + 2, 0:32]", "o[0:16, :]", "o[i, 0:16]"])
def test_a_subscript_region_of_another_static_shape_than_the_value_is_an_error_at_the_assignment(target):
    from pypto.language.parser.diagnostics import ParserTypeError
    text = ("import pypto.language as pl\n\n"
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(a: pl.Tensor[[1, 32], pl.FP32], o: pl.Tensor[[64, 64], pl.FP32], i: pl.Scalar[pl.INDEX]):\n"
            f"    {target} = a\n"
            "    return o\n")
    with pytest.raises(ParserTypeError, match=r"'o\[...\]' is a \[\d+, \d+\] region, the value assigned to it is "
                                              r"\[1, 32\]") as info:
        pl.parse(text)
    assert info.value.span.line == 5


def test_a_slice_whose_symbolic_bounds_cancel_has_a_static_extent():
    # q * 128 : (q + 8) * 128 is 1024 wide for every q; a symbolic extent would make the
    # tile made from it partial and stop a later reshape (the reference's Qwen3 RoPE kernel)
    @pl.function(type=pl.FunctionType.Opaque)
    def f(a: pl.Tensor[[4, 4096], pl.FP32], q: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]) \
            -> pl.Tensor[[1, 1024], pl.FP32]:
        block = a[q:q + 1, q * 128:(q + 8) * 128]
        shifted = a[0:1, 2 * (q - 1) + 16:2 * q + 30]
        wide = a[0:1, q:n]
        return block
    block, shifted, wide = assigns(f)
    assert [d.value for d in block.var.type.shape] == [1, 1024]
    assert [d.value for d in shifted.var.type.shape] == [1, 16]
    assert not isinstance(wide.var.type.shape[1], ConstInt)       # n - q really is dynamic


def test_straight_line_rebinding_shadows_with_a_new_var_so_the_parse_is_ssa():
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        y = pl.add(x, x)
        y = pl.add(y, x)
        y = pl.load(x, [0], [16])
        return x
    a, b, c = assigns(f)
    assert a.var is not b.var and b.var.name_hint == "y" and b.value.args[0] is a.var
    assert c.var is not a.var and isinstance(c.var.type, TileType)
    assert verify_property("SSAForm", ir.Program([f], "P")) == []


def test_rebinding_inside_a_loop_body_reuses_the_outer_var_for_convert_to_ssa():
    @pl.function(type=pl.FunctionType.Opaque)
    def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        y = pl.add(x, x)
        for i in pl.range(4):
            y = pl.add(y, x)
        return y
    first = f.body.stmts[0]
    loop = f.body.stmts[1]
    assert loop.body.stmts[0].var is first.var


def test_tuple_unpacking_of_a_multi_result_call_uses_tuple_get_item():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def two(self, x: pl.Tensor[[16], pl.FP32]) -> tuple[pl.Tensor[[16], pl.FP32], pl.Tensor[[16], pl.FP32]]:
            return x, x

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            a, b = self.two(x)
            return b
    holder, a, b = assigns(P.functions["main"])
    assert isinstance(holder.value, Call) and holder.value.op.name == "two"
    assert isinstance(a.value, TupleGetItem) and a.value.index == 0 and b.value.index == 1
    assert a.value.tuple is holder.var


def test_expression_statements_become_eval_stmts_and_docstrings_vanish():
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[16], pl.FP32], o: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        """A docstring."""
        t = pl.load(x, [0], [16])
        pl.store(t, [0], o)
        return o
    kinds = [type(s) for s in stmts(f)]
    assert kinds == [AssignStmt, EvalStmt, ReturnStmt]


def test_call_attrs_and_const_dtypes():
    text = ("@pl.function\ndef f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n"
            "    y: pl.Tensor[[16], pl.FP32] = pl.tensor.add(x, x, attrs={'tag': 1})\n"
            "    c: pl.Scalar[pl.INT32] = pl.const(3, pl.INT32)\n    return y\n")
    f = pl.parse(text)
    y, c = assigns(f)
    assert y.value.attrs == {"tag": 1}
    assert isinstance(c.value, ConstInt) and c.value.dtype is INT32


def test_overloaded_annotations_literal_scalars_take_the_annotated_dtype():
    @pl.function
    def f() -> pl.Scalar[pl.INT32]:
        a: pl.Scalar[pl.INT32] = 5
        b: pl.Scalar[pl.FP32] = 2
        return a
    a, b = assigns(f)
    assert a.value.dtype is INT32 and b.value.dtype is FP32


def test_spans_point_into_this_file():
    @pl.function(type=pl.FunctionType.InCore)
    def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        y = pl.add(x, x)
        return y
    s = assigns(f)[0]
    assert s.span.filename == __file__
    assert s.span.text.strip() == "y = pl.add(x, x)"
    assert s.value.span.column == s.span.text.index("pl.add") + 1


def _ops(fn):
    from pypto.ir.visitor import collect
    return [c.op.name for c in collect(fn.body, lambda n: isinstance(n, Call))]


def test_plain_assignment_to_an_out_param_writes_the_whole_buffer():
    @pl.function
    def bare(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.add(a, a)
        return out

    @pl.function
    def explicit(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.assemble(out, pl.add(a, a), [0, 0])
        return out

    @pl.function
    def subscript(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out[:] = pl.add(a, a)
        return out
    ir.assert_structural_equal(bare.replace(name="f"), explicit.replace(name="f"))
    ir.assert_structural_equal(bare.replace(name="f"), subscript.replace(name="f"))


def test_write_through_leaves_threaded_values_locals_in_params_and_annotations_alone():
    from pypto.errors import PyptoWarning
    with pytest.warns(PyptoWarning, match="'a' is an input parameter"):
        @pl.function(type=pl.FunctionType.InCore)
        def k(a: pl.Tensor[[16], pl.FP32], b: pl.Tensor[[16], pl.FP32], out: pl.InOut[pl.Tensor[[16], pl.FP32]]) \
                -> pl.Tensor[[16], pl.FP32]:
            t = pl.load(a, [0], [16])
            out = pl.store(t, [0], out)             # mentions out: the user threads it
            out = pl.add(out, b)                    # mentions out
            a = pl.add(b, b)                        # In parameter: plain rebinding (warned)
            tmp = pl.add(b, b)
            tmp = pl.mul(tmp, b)                    # local: plain rebinding
            out: pl.Tensor[[16], pl.FP32] = pl.add(b, b)   # annotated (printer form): unchanged
            return out
    assert "tensor.assemble" not in _ops(k)

    @pl.function
    def looped(a: pl.Tensor[[16], pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        for i in pl.range(4):
            out = pl.add(a, a)
        return out
    assert _ops(looped) == ["tensor.assemble", "tensor.add"]
