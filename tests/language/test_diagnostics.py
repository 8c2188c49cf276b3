"""User mistakes in kernels raise pypto errors that point at the user's own source line."""

import inspect

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError, TypeCheckError
from pypto.language.parser import (InvalidOperationError, ParserError, ParserSyntaxError, ParserTypeError,
                                   SSAViolationError, UndefinedVariableError, UnsupportedFeatureError)

HERE = __file__


def _line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if marker in text:
            return first + i
    raise AssertionError(marker)


def test_undefined_name_points_at_the_file_and_line():
    def build():
        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            y = pl.add(x, tmpp)  # noqa: F821  <- undefined
            return y
        return k
    with pytest.raises(UndefinedVariableError) as info:
        build()
    line = _line_of(build, "<- undefined")
    assert f"{HERE}:{line}:" in str(info.value)
    assert "Undefined variable 'tmpp'" in str(info.value)


def test_fp32_plus_int32_is_a_type_error_at_the_offending_line():
    def build():
        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[16], pl.FP32], z: pl.Tensor[[16], pl.INT32]) -> pl.Tensor[[16], pl.FP32]:
            y = pl.add(x, z)  # <- mixed dtypes
            return y
        return k
    with pytest.raises(TypeCheckError) as info:
        build()
    assert f"{HERE}:{_line_of(build, '<- mixed dtypes')}:" in str(info.value)
    assert "FP32" in str(info.value) and "INT32" in str(info.value)


def test_operator_sugar_reports_the_same_dtype_error():
    with pytest.raises(PyptoError, match=r"sugar\.py:4:.*different dtypes"):
        pl.parse("@pl.function\ndef k(x: pl.Tensor[[16], pl.FP32], z: pl.Tensor[[16], pl.INT32]) -> pl.Tensor[[16], pl.FP32]:\n"
                 "    a = pl.add(x, x)\n    y = a + z\n    return y\n", "sugar.py")


def test_try_statement_is_unsupported_with_a_hint():
    def build():
        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
            try:  # <- try
                y = pl.add(x, x)
            except ValueError:
                y = x
            return y
        return k
    with pytest.raises(UnsupportedFeatureError) as info:
        build()
    err = info.value
    assert f"{HERE}:{_line_of(build, '<- try')}:" in str(err)
    assert "Unsupported statement type: Try" in str(err)
    assert "pl.range" in err.hint and "if / else" in err.hint


def test_render_shows_line_caret_and_help():
    with pytest.raises(ParserError) as info:
        pl.parse("@pl.function\ndef k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n"
                 "    y = pl.add(x, missing)\n    return y\n", "k.py")
    text = info.value.render(color=False)
    assert "error: Undefined variable 'missing'" in text
    assert "--> k.py:3:19" in text
    assert "3 |     y = pl.add(x, missing)" in text
    assert "^^^^^^^" in text
    colored = info.value.render(color=True)
    assert "\033[" in colored


@pytest.mark.parametrize("body, error, pattern", [
    ("def k(x, y: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    return y\n",
     ParserTypeError, r"Parameter 'x' missing type annotation"),
    ("def k(x: pl.Tensor) -> pl.Tensor[[16], pl.FP32]:\n    return x\n", ParserTypeError, r"incomplete annotation"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = pl.ad(x, x)\n    return y\n",
     InvalidOperationError, r"Unknown tensor operation or name 'pl.ad'.*did you mean 'add'"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = pl.tile.lod(x, [0], [16])\n    return x\n",
     InvalidOperationError, r"Unknown op 'pl.tile.lod'.*'load'"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    for i in range(4):\n        pass\n    return x\n",
     ParserSyntaxError, r"must use pl\.range\(\)"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y: pl.Tensor[[32], pl.FP32] = pl.add(x, x)\n"
     "    return y\n", ParserTypeError, r"annotated Tensor\[32\] FP32 but the value is Tensor\[16\] FP32"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y: pl.Tensor[[16], pl.FP16] = pl.add(x, x)\n"
     "    return y\n", ParserTypeError, r"dtype FP16 but the value has dtype FP32"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = pl.add(x, x)\n    for i in pl.range(2):\n"
     "        y = pl.load(x, [0], [16])\n    return x\n", ParserTypeError, r"Cannot reassign 'y' with a different type"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = pl.yield_(x)\n    return x\n",
     InvalidOperationError, r"pl.yield_ outside a loop or if"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    for i, (a,) in pl.range(2, init_values=(x,)):\n"
     "        b = pl.add(a, a)\n    return x\n", ParserSyntaxError, r"must end with pl.yield_"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    for (a,) in pl.while_():\n        pass\n"
     "    return x\n", ParserSyntaxError, r"while_\(\) requires init_values"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    with pl.at(level=pl.Level.CORE_GROUP, deps=[x]):\n"
     "        pass\n    return x\n", ParserTypeError, r"deps= entries must be a TaskId variable"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    t = pl.load(x, [0], [16], target_memory=pl.Mem.Left)\n"
     "    return x\n", TypeCheckError, r"tile.load.*Vec or Mat"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    a, b = pl.add(x, x)\n    return x\n",
     ParserTypeError, r"unpacks 2 result value\(s\) but 'tensor.add' returns 1"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = print(x)\n    return x\n",
     InvalidOperationError, r"print\(\) does nothing"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    pl.static_assert(1 == 2, 'nope')\n    return x\n",
     InvalidOperationError, r"static_assert failed: nope"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    x.foo = 1\n    return x\n",
     UnsupportedFeatureError, r"cannot assign to a Attribute"),
    ("def k(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = x[0:8:2, :]\n    return x\n",
     UnsupportedFeatureError, r"slice step"),
    ("def k(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = x[0]\n    return x\n",
     ParserTypeError, r"rank-2 value takes 2 indices"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = pl.add(x, 'text')\n    return x\n",
     ParserTypeError, r"pl.add: invalid argument"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    return x, x\n",
     ParserTypeError, r"return gives 2 value\(s\) but 'k' declares 1"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP16]:\n    return x\n",
     ParserTypeError, r"return value 0 is Tensor\[16\] FP32 but 'k' declares Tensor\[16\] FP16"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    y = pld.no_such_op()\n    return x\n",
     UnsupportedFeatureError, r"pld.no_such_op is not supported yet"),
    ("def k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    def inner():\n        pass\n    return x\n",
     UnsupportedFeatureError, r"Unsupported statement type: FunctionDef"),
])
def test_user_mistakes_raise_pypto_errors_with_location(body, error, pattern):
    text = "import pypto.language as pl\nimport pypto.language.distributed as pld\n@pl.function(type=pl.FunctionType.InCore)\n" + body
    with pytest.raises(error, match=pattern) as info:
        pl.parse(text, "mistake.py")
    assert isinstance(info.value, PyptoError)
    assert str(info.value).startswith("mistake.py:")
    assert info.value.span is not None and info.value.span.line >= 4


def test_strict_ssa_rebinding_names_the_previous_definition():
    text = ("@pl.function(strict_ssa=True)\ndef k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n"
            "    y = pl.add(x, x)\n    y = pl.add(y, x)\n    return y\n")
    with pytest.raises(SSAViolationError) as info:
        pl.parse(text, "ssa.py")
    assert info.value.span.line == 4
    assert info.value.previous_span.line == 3
    assert "ssa.py:3" in info.value.note


def test_strict_ssa_rejects_subscript_write_sugar():
    text = ("@pl.function(strict_ssa=True)\ndef k(x: pl.Tensor[[16, 16], pl.FP32], o: pl.Tensor[[16, 16], pl.FP32]) "
            "-> pl.Tensor[[16, 16], pl.FP32]:\n    o[:] = x\n    return o\n")
    with pytest.raises(SSAViolationError, match="subscript assignment"):
        pl.parse(text, "ssa.py")


def test_unknown_program_method_and_missing_decorator():
    with pytest.raises(InvalidOperationError, match="no function 'g'"):
        pl.parse("@pl.program\nclass P:\n    @pl.function\n    def k(self, x: pl.Tensor[[16], pl.FP32]) "
                 "-> pl.Tensor[[16], pl.FP32]:\n        return self.g(x)\n")
    with pytest.raises(ParserSyntaxError, match="needs @pl.function"):
        pl.parse("@pl.program\nclass P:\n    def k(self, x: pl.Tensor[[16], pl.FP32]):\n        return x\n")


def test_function_call_argument_count_and_dtype_are_checked():
    head = ("@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n        return x\n\n"
            "    @pl.function(type=pl.FunctionType.Orchestration)\n")
    with pytest.raises(ParserTypeError, match=r"k\(\) takes 1 argument"):
        pl.parse(head + "    def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n"
                        "        return self.k(x, x)\n")
    with pytest.raises(ParserTypeError, match=r"argument 'x' expects dtype FP32, got INT32"):
        pl.parse(head + "    def main(self, x: pl.Tensor[[16], pl.INT32]) -> pl.Tensor[[16], pl.FP32]:\n"
                        "        return self.k(x)\n")


def test_invalid_python_syntax_is_a_parser_syntax_error():
    with pytest.raises(ParserSyntaxError, match=r"bad\.py:2:.*invalid Python syntax"):
        pl.parse("@pl.function\ndef k(x: pl.Tensor[[16], pl.FP32])\n    return x\n", "bad.py")


def test_dsl_constructs_called_outside_a_kernel_raise_clear_errors():
    from pypto.language.scopes import KernelOnlyError
    for fn in (lambda: pl.add(1, 2), lambda: pl.tile.load(None), lambda: list(pl.range(3)),
               lambda: pl.yield_(1), lambda: pl.at(level=pl.Level.CORE_GROUP)):
        with pytest.raises(KernelOnlyError, match="only usable inside"):
            fn()
    with pytest.raises(AttributeError, match="did you mean"):
        pl.tile.lod  # noqa: B018


def test_internal_failures_are_wrapped_with_the_span(monkeypatch):
    from pypto.errors import InternalError
    from pypto.language.parser import dispatch
    import ast

    def broken(ctx, node):
        raise KeyError("boom")
    monkeypatch.setitem(dispatch.STMT_HANDLERS, ast.Pass, broken)
    with pytest.raises(InternalError, match=r"x\.py:3:5: parser failed on this Pass"):
        pl.parse("@pl.function\ndef k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    pass\n    return x\n",
                 "x.py")


def test_every_parser_error_class_reports_the_location_added_later():
    from pypto.ir.span import Span
    for cls in (ParserSyntaxError, ParserTypeError, UndefinedVariableError, SSAViolationError,
                UnsupportedFeatureError, InvalidOperationError):
        err = cls("something is off", hint="fix it")
        err.with_span(Span("f.py", 3, 4))
        assert str(err) == "f.py:3:4: something is off (help: fix it)"
        assert isinstance(err, ParserError) and isinstance(err, PyptoError)


@pytest.mark.parametrize("loop, pattern", [
    ("for i, (a, b) in pl.range(5, init_values=[x]):\n        c, d = pl.yield_(a, b)", r"Mismatch"),
    ("for i in pl.range(5, init_values=[x]):\n        r = pl.yield_(x)", r"target must be"),
    ("for i, a, b in pl.range(5):\n        pass", r"target must be"),
])
def test_loop_form_errors(loop, pattern):
    text = ("@pl.function\ndef k(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:\n    " + loop +
            "\n    return x\n")
    with pytest.raises(ParserSyntaxError, match=pattern):
        pl.parse(text)


def test_same_named_classes_in_one_file_report_their_own_lines():
    def first():
        @pl.program
        class Twin:
            @pl.function
            def f(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                return x
        return Twin

    def second():
        @pl.program
        class Twin:
            @pl.function
            def f(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
                y = pl.add(x, nowhere)  # noqa: F821  <- second twin
                return y
        return Twin
    assert isinstance(first(), ir.Program)
    with pytest.raises(UndefinedVariableError) as info:
        second()
    assert info.value.span.line == _line_of(second, "<- second twin")


def test_rebinding_an_input_parameter_warns_at_the_users_line():
    """`out = expr` on a parameter without pl.Out leaves the caller's array unwritten: say so."""
    import warnings

    import pypto.language as pl
    from pypto.errors import PyptoWarning

    def parse_kernel():
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Tensor[[16, 64], pl.FP32]) -> pl.Tensor[[16, 64], pl.FP32]:
                out = pl.exp(x)
                x = pl.add(x, x)           # reads the parameter: an ordinary update, no warning
                return out
        return P

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_kernel()
    ours = [w for w in caught if issubclass(w.category, PyptoWarning)]
    assert len(ours) == 1
    assert "'out' is an input parameter" in str(ours[0].message) and "pl.Out" in str(ours[0].message)
    assert ours[0].filename == __file__


def test_a_tuple_of_results_passed_as_an_operand_is_described_with_the_unpacking_hint():
    text = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def two(self, x: pl.Tensor[[16, 16], pl.FP32]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        return x, x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.two(x)
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.exp(r)
        return y
"""
    with pytest.raises(TypeCheckError, match=r"pl.exp: the first operand must be a Tensor or a Tile, got a tuple of 2 "
                                             r"values \(Tensor\[16, 16\] FP32, Tensor\[16, 16\] FP32\)") as info:
        pl.parse(text)
    assert info.value.span.line == 14 and "a, b = " in info.value.hint


def test_an_annotation_python_evaluates_itself_reports_the_users_line():
    # a module-level alias, or a method's annotations when its class is defined: Python builds the type before
    # pypto's parser sees the kernel
    with pytest.raises(ParserTypeError, match="shape entries must be integers or pl.dynamic dims") as info:
        pl.Tensor[[range, 64], pl.FP32]                    # BAD-ALIAS
    line = inspect.currentframe().f_lineno - 1
    assert info.value.span is not None and info.value.span.filename == __file__ and info.value.span.line == line
