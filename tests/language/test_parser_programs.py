"""Programs, functions and the parser API: @pl.program classes, module-level functions,
@pl.inline helpers, jit-style overrides, and the text entry points."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.enums import FunctionType, Level, ParamDirection, Role
from pypto.ir.expr import Call, ConstInt, GlobalVar
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt
from pypto.ir.types import TensorType, TupleType
from pypto.language.parser import parse_function, parse_source


@pl.function(type=pl.FunctionType.InCore)
def module_kernel(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
    y = pl.add(x, x)
    return y


@pl.inline
def double(t):
    s = pl.add(t, t)
    return s


def test_module_level_function_is_an_ir_function():
    assert isinstance(module_kernel, ir.Function)
    assert module_kernel.func_type is FunctionType.InCore
    assert (module_kernel.level, module_kernel.role) == (Level.CHIP_DIE, Role.SubWorker)


def test_program_methods_calls_and_auto_added_functions():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y = self.later(x)
            z = module_kernel(y)
            return z

        @pl.function(type=pl.FunctionType.InCore)
        def later(self, x: pl.Tensor[[16], pl.FP32]):
            w = pl.mul(x, x)
            return w
    assert list(Prog.functions) == ["main", "later", "module_kernel"]
    call_y, call_z = [s.value for s in ir.flatten_to_stmts(Prog.functions["main"].body) if isinstance(s, AssignStmt)]
    assert isinstance(call_y.op, GlobalVar) and call_y.op.name == "later"
    assert ir.structural_equal(call_y.type, TensorType([16], FP32))      # inferred from later's return
    assert call_z.op.name == "module_kernel"
    assert Prog.functions["later"].return_types[0].dtype is FP32


def test_decorator_options_directions_levels_and_attrs():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.HOST, role=pl.Role.Orchestrator,
                     attrs={"k": 1})
        def main(self, a: pl.Tensor[[16], pl.FP32], b: pl.InOut[pl.Tensor[[16], pl.FP32]],
                 c: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            return c
    f = Prog.functions["main"]
    assert f.param_directions == (ParamDirection.In, ParamDirection.InOut, ParamDirection.Out)
    assert (f.level, f.role) == (Level.HOST, Role.Orchestrator)
    assert f.attrs == {"k": 1}


def test_func_attr_statement():
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[16], pl.FP32], w: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        pl.func_attr({"stationary": w, "split": pl.SplitMode.UP_DOWN})
        return x
    assert k.attrs["stationary"] is k.params[1] and k.attrs["split"] is pl.SplitMode.UP_DOWN


def test_inline_helper_is_expanded_at_the_call_site():
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(x, [0], [16])
        u = double(t)
        v = double(u)
        return x
    ops = [s.value.op.name for s in ir.flatten_to_stmts(k.body) if isinstance(s, AssignStmt)
           and isinstance(s.value, Call)]
    assert ops == ["tile.load", "tile.add", "tile.add"]
    with pytest.raises(pl.KernelOnlyError):
        double(1)


def test_closure_values_are_constants():
    rows = 8

    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[64, 16], pl.FP32]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(64 // rows):
            t = pl.load(x, [i * rows, 0], [rows, 16])
        return x
    loop = [s for s in k.body.stmts if isinstance(s, ForStmt)][0]
    assert loop.stop.value == 8
    assert ir.flatten_to_stmts(loop.body)[0].var.type.shape[0].value == 8


def test_parse_function_overrides_fill_bare_tensors_and_specialize_scalars():
    def kernel(x: pl.Tensor, n: pl.INDEX, scale: pl.FP32) -> pl.Tensor:
        t = pl.load(x, [0, 0], [16, 16])
        if n > 2:
            s = pl.mul(t, scale)
        return x
    fn = parse_function(kernel, func_type=FunctionType.InCore,
                        overrides={"x": TensorType([16, 16], FP32), "n": 4, "scale": 0.25})
    assert [p.name_hint for p in fn.params] == ["x"]
    assert not [s for s in fn.body.stmts if isinstance(s, IfStmt)]          # the if was folded
    muls = [s for s in ir.flatten_to_stmts(fn.body) if isinstance(s, AssignStmt)][1]
    assert muls.value.op.name == "tile.muls" and muls.value.args[1].value == 0.25
    assert fn.return_types[0].shape[0].value == 16


def test_parse_function_extra_globals_make_functions_callable_by_name():
    def entry(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        y = helper(x)  # noqa: F821 - provided through extra_globals
        return y
    fn = parse_function(entry, func_type=FunctionType.Orchestration, extra_globals={"helper": module_kernel})
    call = fn.body.stmts[0].value
    assert call.op.name == "module_kernel" and ir.structural_equal(call.type, TensorType([16], FP32))


def test_parse_source_text_forms(tmp_path):
    text = ("import pypto.language as pl\n\nN = 32\nM = pl.dynamic('M')\n\n"
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def a(x: pl.Tensor[[M, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:\n    return x\n\n"
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def b(x: pl.Tensor[[M, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:\n    y = a(x)\n    return y\n")
    prog = parse_source(text, filename="two.py")
    assert isinstance(prog, ir.Program) and list(prog.functions) == ["a", "b"]
    assert prog.functions["a"].params[0].type.shape[1].value == 32
    path = tmp_path / "dump.py"
    path.write_text(ir.python_print(prog))
    again = pl.loads_program(path)
    ir.assert_structural_equal(prog, again)
    single = pl.parse("@pl.function\ndef f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n    return n\n")
    assert isinstance(single, ir.Function)
    assert isinstance(pl.parse_program("@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    return n\n"), ir.Program)


def test_text_imports_are_limited_to_pypto_modules():
    with pytest.raises(pl.parser.UnsupportedFeatureError, match="may not import 'os'"):
        pl.parse("import os\n")


def test_program_strict_ssa_applies_to_every_method():
    with pytest.raises(pl.parser.SSAViolationError):
        @pl.program(strict_ssa=True)
        class P:
            @pl.function
            def f(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                y = pl.add(x, x)
                y = pl.add(y, y)
                return y


def test_multi_value_return_annotations():
    @pl.function
    def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tuple[pl.Tensor[[16], pl.FP32], pl.Scalar[pl.INDEX]]:
        return x, 3
    assert len(f.return_types) == 2
    assert isinstance(f.body.stmts[-1].values[1], ConstInt)
    assert isinstance(TupleType([INDEX and f.return_types[1]]), TupleType)


@pl.function(type=pl.FunctionType.InCore)
def scale_rows(src: pl.Tensor[[16, 64], pl.FP32], factor: pl.Scalar[pl.FP32], first: pl.Scalar[pl.BOOL],
               dst: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
    t = pl.load(src, [0, 0], [16, 64])
    if first:
        out = pl.store(t, [0, 0], dst)
    else:
        s = pl.mul(t, factor)
        out = pl.store(s, [0, 0], dst)
    return out


def _build_program(rows: int, cols: int):
    """Dims come from the builder's locals, as in parameterised reference programs."""
    total = rows * 4

    @pl.program
    class Built:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[total, cols], pl.FP32], cfg: pl.Tensor[[2], pl.INT64],
                 out: pl.Out[pl.Tensor[[total, cols], pl.FP32]]) -> pl.Tensor[[total, cols], pl.FP32]:
            n = pl.tensor.read(cfg, [0])
            for b in pl.range(n):
                part = pl.slice(x, [rows, cols], [b * rows, 0])
                buf = pl.create_tensor([rows, cols], dtype=pl.FP32)
                res = scale_rows(part, 0.5, b == 0, buf)
                out = pl.assemble(out, res, [b * rows, 0])
            return out
    return Built


def test_parameterised_program_with_module_kernels_and_branch_assignments():
    prog = _build_program(16, 64)
    assert list(prog.functions) == ["main", "scale_rows"]
    main = prog.functions["main"]
    assert main.params[0].type.shape[0].value == 64
    loop = [s for s in main.body.stmts if isinstance(s, ForStmt)][0]
    call = [s for s in ir.flatten_to_stmts(loop.body) if isinstance(s, AssignStmt)][2].value
    assert call.op.name == "scale_rows" and call.args[1].value == 0.5 and call.args[2].op == "eq"
    kernel = prog.functions["scale_rows"]
    branch = [s for s in kernel.body.stmts if isinstance(s, IfStmt)][0]
    then_out = ir.flatten_to_stmts(branch.then_body)[0].var
    else_out = ir.flatten_to_stmts(branch.else_body)[1].var
    assert then_out is else_out                      # one Var per name: ConvertToSSA builds the phi
    text = ir.python_print(prog)
    ir.assert_structural_equal(prog, pl.parse(text))


def test_overrides_fill_bare_out_annotations_and_keep_the_direction():
    def kernel(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        t = pl.load(a, [0], [16])
        out = pl.store(t, [0], out)
        return out
    t16 = TensorType([16], FP32)
    fn = parse_function(kernel, func_type=FunctionType.InCore, overrides={"a": t16, "out": t16})
    assert fn.param_directions == (ParamDirection.In, ParamDirection.Out)
    assert ir.structural_equal(fn.return_types[0], t16)
    with pytest.raises(pl.parser.ParserTypeError, match="Parameter 'out' has an incomplete annotation"):
        parse_function(kernel, func_type=FunctionType.InCore, overrides={"a": t16})


@pl.function(type=pl.FunctionType.Orchestration)
def module_wrapper(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
    y = module_kernel(x)
    return y


def test_auto_added_functions_bring_their_own_callees():
    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y = module_wrapper(x)
            return y
    assert list(Prog.functions) == ["main", "module_wrapper", "module_kernel"]
