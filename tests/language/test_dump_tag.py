"""`pl.dump_tag(t)`: consumed by the parser into the `dump_vars` attr of every later kernel call of the
function that takes t (by Var, in argument order); printed as `attrs={"dump_vars": [...]}` and read
back; kept by the passes that rebuild those calls; refused at the user's line where it cannot mean
anything; a tag no call consumes is a warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir, passes
from pypto.errors import PyptoError, PyptoWarning
from pypto.ir.expr import Call, Var
from pypto.ir.visitor import collect
from pypto.language.parser.diagnostics import ParserSyntaxError, ParserTypeError

R, C = 16, 32
SHAPE = f"[{R}, {C}]"


def _program(body: str, *, main_type: str = "Orchestration", helper: str = ""):
    """Two kernels (`twice`: out = 2x, `plus`: out = x + y), an optional Inline `helper(src, other, dst)`
    with body `helper`, and a `main(x, y, out)` around `body`."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    if helper:
        helper = f'''
    @pl.function(type=pl.FunctionType.Inline)
    def helper(self, src: pl.Tensor[{SHAPE}, pl.FP32], other: pl.Tensor[{SHAPE}, pl.FP32],
               dst: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]) -> pl.Tensor[{SHAPE}, pl.FP32]:
''' + "\n".join("        " + line for line in helper.strip().splitlines()) + "\n        return dst\n"
    return pl.parse(f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[{SHAPE}, pl.FP32],
              out: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]) -> pl.Tensor[{SHAPE}, pl.FP32]:
        t: pl.Tile[{SHAPE}, pl.FP32] = pl.load(x, [0, 0], {SHAPE})
        ret = pl.store(pl.add(t, t), [0, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.InCore)
    def plus(self, x: pl.Tensor[{SHAPE}, pl.FP32], y: pl.Tensor[{SHAPE}, pl.FP32],
             out: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]) -> pl.Tensor[{SHAPE}, pl.FP32]:
        a: pl.Tile[{SHAPE}, pl.FP32] = pl.load(x, [0, 0], {SHAPE})
        b: pl.Tile[{SHAPE}, pl.FP32] = pl.load(y, [0, 0], {SHAPE})
        ret = pl.store(pl.add(a, b), [0, 0], out)
        return ret
{helper}
    @pl.function(type=pl.FunctionType.{main_type})
    def main(self, x: pl.Tensor[{SHAPE}, pl.FP32], y: pl.Tensor[{SHAPE}, pl.FP32],
             out: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]) -> pl.Tensor[{SHAPE}, pl.FP32]:
{lines}
        return out
''')


def _kernel_calls(func) -> list:
    return collect(func.body, lambda n: isinstance(n, Call) and n.is_function_call())


def _dumped(call) -> list:
    return [v.name_hint for v in call.attrs.get("dump_vars", [])]


# ---------------------------------------------------------------------------- the attr on the calls
def test_a_tag_marks_every_later_call_that_takes_the_value():
    prog = _program("""
mid = pl.create_tensor([16, 32], dtype=pl.FP32)
pl.dump_tag(x)
mid = self.twice(y, mid)
mid = self.plus(mid, x, mid)
out = self.plus(x, y, out)
""")
    first, second, third = _kernel_calls(prog.functions["main"])
    assert "dump_vars" not in first.attrs                  # x is no argument of the first call
    assert _dumped(second) == ["x"] and _dumped(third) == ["x"]
    x = prog.functions["main"].params[0]
    assert second.attrs["dump_vars"][0] is x and third.attrs["dump_vars"][0] is x   # the Var, not a name
    assert not collect(prog.functions["main"].body,          # the marker left no statement behind
                       lambda n: isinstance(n, Call) and not n.is_function_call() and "dump" in n.op.name)


def test_dump_vars_follow_argument_order_and_list_each_value_once():
    prog = _program("pl.dump_tag(y)\npl.dump_tag(x)\npl.dump_tag(x)\nout = self.plus(x, y, out)")
    (call,) = _kernel_calls(prog.functions["main"])
    assert _dumped(call) == ["x", "y"]


def test_rebinding_the_name_ends_the_tag():
    prog = _program("""
mid = pl.create_tensor([16, 32], dtype=pl.FP32)
pl.dump_tag(mid)
mid = self.twice(x, mid)
out = self.twice(mid, out)
""")
    first, second = _kernel_calls(prog.functions["main"])
    assert _dumped(first) == ["mid"]
    assert "dump_vars" not in second.attrs                 # the rebound mid is a new value


def test_a_submitted_call_carries_the_tag_too():
    prog = _program("pl.dump_tag(x)\nout, tid = pl.submit(self.twice, x, out)")
    (call,) = _kernel_calls(prog.functions["main"])
    assert isinstance(call, ir.Submit) and _dumped(call) == ["x"]


def test_a_tag_inside_a_loop_follows_the_ssa_version_of_its_value():
    prog = _program("""
acc = pl.create_tensor([16, 32], dtype=pl.FP32)
acc = self.twice(x, acc)
pl.dump_tag(acc)
for i in pl.range(3):
    out = self.plus(acc, y, out)
""")
    ssa = passes.convert_to_ssa()(prog)
    (call,) = [c for c in _kernel_calls(ssa.functions["main"]) if c.op.name == "plus"]
    assert call.attrs["dump_vars"] == [call.args[0]]          # renamed together with the argument


def test_a_pl_at_task_dumps_the_tagged_tensors_its_body_reads():
    with pytest.warns(PyptoWarning, match=r"dump_tag\(y\) marks nothing"):
        prog = _program("""
pl.dump_tag(x)
pl.dump_tag(y)
with pl.at(level=pl.Level.CORE_GROUP):
    t = pl.load(x, [0, 0], [16, 32])
    pl.store(pl.mul(t, 3.0), [0, 0], out)
""")
    (opts,) = collect(prog.functions["main"].body, lambda n: isinstance(n, Call) and not n.is_function_call()
                      and n.op.name == "system.task_options")
    assert [v.name_hint for v in opts.args[3].elements] == ["x"]     # y is not read there
    x = np.random.default_rng(5).standard_normal((R, C)).astype(np.float32)
    out = np.zeros_like(x)
    ir.compile(prog, platform="a2a3sim")(x, np.zeros_like(x), out)   # the marked task runs as before
    np.testing.assert_allclose(out, 3 * x, rtol=1e-6)


def test_a_tag_in_an_inline_function_reaches_its_calls_and_survives_inlining():
    prog = _program("out = self.helper(x, y, out)\nout = self.twice(x, out)",
                    helper="pl.dump_tag(src)\ndst = self.twice(src, dst)")
    (inner,) = _kernel_calls(prog.functions["helper"])
    assert _dumped(inner) == ["src"]
    inlined = passes.inline_functions()(prog)
    first, second = _kernel_calls(inlined.functions["main"])
    assert first.attrs["dump_vars"] == [first.args[0]] and first.args[0].name_hint == "x"   # the caller's tensor
    assert "dump_vars" not in second.attrs                   # the helper's tag stayed in the helper


def test_a_tag_at_an_inline_call_moves_onto_the_spliced_tasks_that_read_the_value():
    prog = _program("pl.dump_tag(x)\nout = self.helper(x, y, out)", helper="""
with pl.at(level=pl.Level.CORE_GROUP):
    t = pl.load(src, [0, 0], [16, 32])
    pl.store(pl.mul(t, 3.0), [0, 0], dst)
with pl.at(level=pl.Level.CORE_GROUP):
    u = pl.load(other, [0, 0], [16, 32])
    pl.store(u, [0, 0], dst)
dst = self.twice(src, dst)
src = self.twice(other, src)
dst = self.twice(src, dst)
""")
    (call,) = _kernel_calls(prog.functions["main"])
    assert _dumped(call) == ["x"]
    inlined = passes.inline_functions()(prog)
    main = inlined.functions["main"]
    opts = collect(main.body, lambda n: isinstance(n, Call) and not n.is_function_call()
                   and n.op.name == "system.task_options")
    assert [[v.name_hint for v in o.args[3].elements] for o in opts] == [["x"]]   # only the first task reads x
    first, rebind, third = _kernel_calls(main)
    assert _dumped(first) == ["x"] and first.attrs["dump_vars"][0] is main.params[0]
    assert rebind.attrs["dump_vars"] == [rebind.args[1]]     # x is still passed there (as the output buffer)
    assert "dump_vars" not in third.attrs                    # src rebound: a new value
    ir.assert_structural_equal(inlined, pl.parse(ir.python_print(inlined)))


# ---------------------------------------------------------------------------- printing and passes
def test_the_attr_prints_and_reads_back_as_the_same_var():
    prog = _program("pl.dump_tag(y)\nout = self.plus(x, y, out)")
    text = ir.python_print(prog)
    assert "'dump_vars': [y]" in text and "dump_tag" not in text
    again = pl.parse(text)
    ir.assert_structural_equal(prog, again)
    (call,) = _kernel_calls(again.functions["main"])
    assert call.attrs["dump_vars"] == [call.args[1]]
    assert ir.python_print(again) == text


def test_the_call_site_update_of_convert_tensor_to_tile_ops_keeps_the_attr():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def scaled(self, a: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
            b: pl.Tensor[[R, C], pl.FP32] = pl.mul(a, 4.0)
            return b

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[R, C], pl.FP32]) -> pl.Tensor[[R, C], pl.FP32]:
            pl.dump_tag(a)
            r: pl.Tensor[[R, C], pl.FP32] = self.scaled(a)
            return r

    after = passes.convert_tensor_to_tile_ops()(P)
    (call,) = _kernel_calls(after.functions["main"])
    assert len(call.args) == 2                            # the callee gained its Out parameter
    assert call.attrs["dump_vars"] == [call.args[0]] and call.args[0].name_hint == "a"


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_tagged_program_compiles_keeps_the_attr_and_computes_the_same(platform):
    prog = _program("""
mid = pl.create_tensor([16, 32], dtype=pl.FP32)
pl.dump_tag(x)
mid = self.twice(x, mid)
pl.dump_tag(mid)
out = self.plus(mid, y, out)
""")
    compiled = ir.compile(prog, platform=platform, verification_level=passes.VerificationLevel.ROUNDTRIP)
    calls = _kernel_calls(compiled.lowered.functions["main"])
    assert [_dumped(c) for c in calls] == [["x"], ["mid"]]
    assert all(c.attrs["dump_vars"][0] is c.args[0] for c in calls)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((R, C)).astype(np.float32), rng.standard_normal((R, C)).astype(np.float32)
    out = np.zeros((R, C), np.float32)
    compiled(x, y, out)
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)


# ---------------------------------------------------------------------------- refused or warned
def test_a_tag_in_a_kernel_body_is_refused_at_its_line():
    with pytest.raises(ParserSyntaxError, match="Orchestration or Inline function; 'main' is InCore") as err:
        _program("pl.dump_tag(x)\nout = self.twice(x, out)", main_type="InCore")
    assert ":24:" in str(err.value)


@pytest.mark.parametrize("line, error, message", [
    ("pl.dump_tag(x[0:8, :])", ParserSyntaxError, "takes a bare variable name"),
    ("pl.dump_tag(x, y)", ParserSyntaxError, "exactly one tensor name"),
    ("n = 3\npl.dump_tag(n)", ParserTypeError, "marks a tensor; 'n' is"),
    ("d = pl.dump_tag(x)", PyptoError, "can only be used as a statement"),
    ("pl.dump_tag(nothing)", PyptoError, "Undefined variable 'nothing'"),
], ids=["subscript", "two", "not-a-tensor", "expression", "undefined"])
def test_misspelled_tags_are_refused(line, error, message):
    with pytest.raises(error, match=message):
        _program(line + "\nout = self.twice(x, out)")


def test_a_tag_no_call_consumes_is_a_warning_at_its_line():
    with pytest.warns(PyptoWarning, match=r"pl.dump_tag\(y\) marks nothing") as record:
        _program("pl.dump_tag(y)\nout = self.twice(x, out)")
    assert record[0].lineno == 24
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _program("pl.dump_tag(x)\nout = self.twice(x, out)")     # consumed: silent


def test_the_dump_vars_attr_holds_variables():
    with pytest.raises(ParserTypeError, match="lists tensor variables"):
        _program("out = self.twice(x, out, attrs={'dump_vars': [1]})")
    prog = _program("out = self.twice(x, out, attrs={'dump_vars': [x]})")
    (call,) = _kernel_calls(prog.functions["main"])
    assert isinstance(call.attrs["dump_vars"][0], Var) and call.attrs["dump_vars"][0] is call.args[0]
