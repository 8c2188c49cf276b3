"""What a task launch carries on its call: `pl.no_dep` positions (arg_direction_overrides), per-argument
`pl.adir` directions, the submit mark (`ir.Submit`), outputs a submit leaves to the runtime, `dumps=`
marks; and the spellings the task graph refuses at the user's line: a flat-result index in `deps=`,
a hand-placed AUTO `pl.scope()` without auto_scope=False, task options on a Group member."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.ir.enums import ArgDirection
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, EvalStmt, flatten_to_stmts

ROWS, COLS = 32, 64
SHAPE = f"[{ROWS}, {COLS}]"


def _orchestration(body: str, *, decorator: str = "@pl.function(type=pl.FunctionType.Orchestration)"):
    """A program of two kernels (`scale` returns its output, `fill` does not) around `body`."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    text = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[{SHAPE}, pl.FP32],
              out: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]) -> pl.Tensor[{SHAPE}, pl.FP32]:
        t: pl.Tile[{SHAPE}, pl.FP32] = pl.load(x, [0, 0], {SHAPE})
        ret = pl.store(pl.mul(t, 2.0), [0, 0], out)
        return ret

    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[{SHAPE}, pl.FP32], out: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]):
        t: pl.Tile[{SHAPE}, pl.FP32] = pl.load(x, [0, 0], {SHAPE})
        pl.store(t, [0, 0], out)

    {decorator}
    def main(self, x: pl.Tensor[{SHAPE}, pl.FP32], y: pl.Tensor[{SHAPE}, pl.FP32],
             out: pl.Out[pl.Tensor[{SHAPE}, pl.FP32]]) -> pl.Tensor[{SHAPE}, pl.FP32]:
{lines}
        return out
'''
    return pl.parse(text)


def _kernel_calls(program, name="main") -> list:
    stmts = flatten_to_stmts(program.functions[name].body)
    values = [s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None for s in stmts]
    return [v for v in values if isinstance(v, Call) and v.is_function_call()]


def _options(program, name="main") -> list:
    stmts = flatten_to_stmts(program.functions[name].body)
    return [s.expr for s in stmts if isinstance(s, EvalStmt) and isinstance(s.expr, Call)
            and not s.expr.is_function_call() and s.expr.op.name == "system.task_options"]


# ---------------------------------------------------------------------------- marks on the call
def test_no_dep_marks_the_argument_position_of_the_call():
    prog = _orchestration("out = self.scale(x, pl.no_dep(out))\nout, tid = pl.submit(self.scale, pl.no_dep(x), out)")
    plain, submitted = _kernel_calls(prog)
    assert plain.attrs["arg_direction_overrides"] == [1]
    assert submitted.attrs["arg_direction_overrides"] == [0]
    assert plain.args[1] is prog.functions["main"].params[2]      # the marker is gone: the tensor itself
    assert not _options(prog)                                     # nothing else carries the opt-out


def test_a_submitted_call_is_an_ir_submit_and_a_plain_call_is_not():
    plain, submitted = _kernel_calls(_orchestration("out = self.scale(x, out)\nout, tid = pl.submit(self.scale, x, out)"))
    assert isinstance(submitted, ir.Submit) and not isinstance(plain, ir.Submit)
    assert isinstance(submitted, ir.Call) and submitted.op.name == "scale"
    with pytest.raises(TypeError, match="view"):
        ir.Submit()


def test_adir_names_are_the_argument_directions_and_round_trip():
    assert pl.adir.output_existing is ArgDirection.OutputExisting is ir.ArgDirection.output_existing
    assert repr(pl.adir.no_dep) == "pl.adir.no_dep" and int(pl.adir.scalar) == 5
    prog = _orchestration('out, tid = pl.submit(self.scale, x, pl.no_dep(out), '
                          'attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]})')
    (call,) = _kernel_calls(prog)
    assert call.arg_directions == [pl.adir.input, pl.adir.output_existing]
    assert call.attrs["arg_direction_overrides"] == [1]
    text = ir.python_print(prog)
    assert "pl.adir.output_existing" in text
    ir.assert_structural_equal(prog, pl.parse(text))


def test_arg_directions_must_name_one_direction_per_argument():
    with pytest.raises(PyptoError, match="arg_directions has 1 entries for a call with 2 argument") as err:
        _orchestration('out = self.scale(x, out, attrs={"arg_directions": [pl.adir.input]})')
    assert ":21:" in str(err.value)                               # the body's first line: the call
    with pytest.raises(PyptoError, match=r"pl.adir.<direction>"):
        _orchestration('out = self.scale(x, out, attrs={"arg_directions": [1, 2]})')


def test_a_submit_may_leave_trailing_outputs_to_the_runtime():
    prog = _orchestration("r, tid = pl.submit(self.scale, x)\nout = self.scale(r, out)")
    main = prog.functions["main"]
    created = [s for s in flatten_to_stmts(main.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
               and not s.value.is_function_call() and s.value.op.name == "tensor.create"]
    assert len(created) == 1 and created[0].var.type.shape == [ROWS, COLS]
    submitted = _kernel_calls(prog)[0]
    assert submitted.args[1] is created[0].var                    # the allocation is the omitted argument


def test_dumps_marks_the_tasks_tensors():
    prog = _orchestration("out, tid = pl.submit(self.scale, x, out, dumps=[x, out])")
    (opts,) = _options(prog)
    assert [e for e in opts.args[3].elements] == [prog.functions["main"].params[0], prog.functions["main"].params[2]]
    ir.assert_structural_equal(prog, pl.parse(ir.python_print(prog)))


def test_dumps_entries_are_tensors_named_once():
    with pytest.raises(PyptoError, match="dumps= entries must be tensors"):
        _orchestration("out, tid = pl.submit(self.scale, x, out, dumps=[1])")
    with pytest.raises(PyptoError, match="lists 'x' more than once"):
        _orchestration("out, tid = pl.submit(self.scale, x, out, dumps=[x, x])")


# ---------------------------------------------------------------------------- deps= entries
@pytest.mark.parametrize("line", [
    "res = pl.submit(self.scale, x, out)\nout, _ = pl.submit(self.scale, y, out, deps=[res[1]])",
    "res = pl.submit(self.scale, x, out)\nwith pl.at(level=pl.Level.CORE_GROUP, deps=[res[1]]):\n    out[:] = pl.add(y, y)",
], ids=["submit", "pl.at"])
def test_a_task_id_indexed_out_of_a_flat_result_is_refused(line):
    with pytest.raises(PyptoError, match=r"deps= entries must be a TaskId variable.*got 'res\[1\]'") as err:
        _orchestration(line)
    assert ":22:" in str(err.value)                               # the line with deps=, not the submit's


def test_task_ids_bound_by_name_and_array_slots_are_accepted():
    prog = _orchestration("""
res = pl.submit(self.scale, x, out)
tid = res[1]
tids = pl.array.create(2, pl.TASK_ID)
tids[0] = tid
out, _ = pl.submit(self.scale, y, out, deps=[tid, tids[0], None])""")
    (opts,) = _options(prog)
    assert len(opts.args[0].elements) == 2


# ---------------------------------------------------------------------------- runtime scopes
def test_a_hand_placed_auto_scope_needs_auto_scope_false():
    body = "with pl.scope():\n    out = self.scale(x, out)"
    with pytest.raises(PyptoError, match=r"needs auto_scope=False") as err:
        _orchestration(body)
    assert ":21:" in str(err.value)
    placed = _orchestration(body, decorator="@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)")
    plain = _orchestration("out = self.scale(x, out)")
    ir.assert_structural_equal(placed, plain)                     # tracking stays on: the region is its body


def test_runtime_scopes_nest_only_as_the_runtime_allows():
    manual_first = "with pl.manual_scope():\n    with pl.scope():\n        out = self.scale(x, out)"
    with pytest.raises(PyptoError, match="may not nest inside a MANUAL scope"):
        _orchestration(manual_first, decorator="@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)")
    with pytest.raises(PyptoError, match="manual scope may not nest inside another manual scope"):
        _orchestration("with pl.manual_scope():\n    with pl.scope(mode=pl.ScopeMode.MANUAL):\n"
                       "        out = self.scale(x, out)")


def test_a_runtime_scope_in_a_kernel_is_refused():
    with pytest.raises(PyptoError, match="belongs to an orchestration function, not to a InCore"):
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
                with pl.manual_scope():
                    t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
                    pl.store(t, [0, 0], out)


# ---------------------------------------------------------------------------- pl.submit in a Group body
def _group(member_line: str):
    @pl.program
    class G:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, q: pl.Tensor[[16, 16], pl.FP32]):
            pass

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            return out

        @pl.function(type=pl.FunctionType.Group)
        def g(self, q: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            (first,) = pl.submit(self.cube, q)
            if member_line == "deps":
                r, _ = pl.submit(self.vec, out, deps=[first])
            else:
                r, _ = pl.submit(self.vec, pl.no_dep(out))
            return r
    return G


def test_group_members_carry_no_task_options():
    with pytest.raises(PyptoError, match="inside a Group function takes no deps="):
        _group("deps")
    prog = _group("no_dep")
    assert not _options(prog, "g")
    assert _kernel_calls(prog, "g")[1].attrs["arg_direction_overrides"] == [0]


def test_task_options_inside_a_cluster_are_refused():
    @pl.jit
    def hinted(x: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.cluster():
            with pl.spmd(2, allow_early_resolve=True):
                b = pl.tile.get_block_idx()
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(x, [b * 8, 0], [8, 64])
                    pl.store(pl.exp(t), [b * 8, 0], out)
        return out

    import numpy as np
    x = np.zeros((16, 64), np.float32)
    with pytest.raises(PyptoError, match=r"allow_early_resolve=...\) inside pl.cluster\(\)"):
        hinted(x, np.zeros_like(x))


def test_auto_scope_belongs_to_orchestration_bodies():
    with pytest.raises(PyptoError, match=r"@pl.jit.incore takes no auto_scope="):
        pl.jit.incore(auto_scope=False)
    with pytest.raises(PyptoError, match=r"@pl.jit.opaque takes no auto_scope="):
        pl.jit.opaque(auto_scope=False)
    with pytest.raises(PyptoError, match="auto_scope= must be True or False"):
        _orchestration("out = self.scale(x, out)",
                       decorator='@pl.function(type=pl.FunctionType.Orchestration, auto_scope="no")')


def test_per_argument_marks_follow_their_arguments_when_one_is_dropped():
    prog = _orchestration('out = self.scale(pl.no_dep(x), pl.no_dep(out), '
                          'attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]})')
    (call,) = _kernel_calls(prog)
    dropped = call.without_arg(0)
    assert list(dropped.args) == [call.args[1]]
    assert dropped.arg_directions == [pl.adir.output_existing]
    assert dropped.attrs["arg_direction_overrides"] == [0]       # out: was position 1
    assert "arg_direction_overrides" not in call.without_arg(0).without_arg(0).attrs
