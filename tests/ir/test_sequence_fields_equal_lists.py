"""Node sequence fields (shapes, call args, statement lists) compare equal to lists of the same items,
as the reference's Python API lets callers write `t.shape == [1, 24]`; they stay tuples otherwise."""

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.expr import ConstInt, Var
from pypto.ir.node import IRTuple
from pypto.ir.ops.registry import create_op_call
from pypto.ir.types import TensorType
from pypto.ir.visitor import IRMutator


def _exp_call():
    x = Var("x", TensorType([4, 8], FP32))
    return x, create_op_call("tensor.exp", [x])


def test_a_shape_equals_the_list_of_its_ints_and_not_a_different_one():
    t = TensorType([1, 24], FP32)
    assert t.shape == [1, 24]
    assert t.shape != [24, 1] and t.shape != [1, 24, 1]
    assert not (t.shape == [1, 25])


def test_call_args_equal_a_list_of_the_same_vars():
    x, call = _exp_call()
    assert call.args == [x]
    assert call.args != [Var("x", x.type)]            # another Var of the same name is another value


def test_fields_stay_hashable_tuples_that_match_plain_tuples():
    x, call = _exp_call()
    assert isinstance(call.args, tuple) and type(call.args) is IRTuple
    assert call.args == (x,) and hash(call.args) == hash((x,))
    assert {call.args: 1}[(x,)] == 1
    assert ConstInt(3, INDEX) == 3 and ConstInt(3, INDEX) != 4 and IRTuple((ConstInt(3, INDEX),)) == [3]
    assert ConstInt(1, INDEX) != True and ConstInt(3, INDEX) != ConstInt(3, INDEX)   # bools and other nodes: no


def test_replace_and_mutators_keep_the_list_equality():
    x, call = _exp_call()
    y = Var("y", x.type)
    assert call.replace(args=(y,)).args == [y]

    class Rename(IRMutator):
        def mutate_var(self, v):
            return y if v is x else v

    assert Rename().mutate(call).args == [y]


def test_parsed_programs_give_list_comparable_statement_sequences():
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[2, 3], pl.FP32]) -> pl.Tensor[[2, 3], pl.FP32]:
            y = pl.exp(x)
            return y

    body = P["k"].body
    assert body.stmts == list(body.stmts) and len(body.stmts) == 2
    assert P["k"].params[0].type.shape == [2, 3]
