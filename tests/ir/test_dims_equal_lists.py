"""Shapes and MakeTuple elements are `Dims`: a tuple that also equals a list of the same ints, as the
reference's Python API (which hands them back as lists) lets callers write `t.shape == [1, 24]`."""

from pypto.ir.dtypes import FP32, INDEX
from pypto.ir.expr import MakeTuple, Var, const
from pypto.ir.types import Dims, TensorType, TileType
from pypto.ir.visitor import IRMutator, collect


def test_static_shape_equals_the_list_and_the_tuple():
    t = TensorType([1, 24], FP32)
    assert isinstance(t.shape, Dims)
    assert t.shape == [1, 24] and t.shape != [24, 1] and t.shape != [1, 24, 1]
    assert t.shape == tuple(t.shape) and hash(t.shape) == hash(tuple(t.shape))


def test_a_dynamic_dim_equals_only_itself():
    n = Var("n", INDEX)
    t = TileType([16, n], FP32)
    assert t.shape == [16, n] and t.shape != [16, 16]


def test_make_tuple_elements_and_mutation_keep_the_list_equality():
    class Double(IRMutator):
        def mutate_const_int(self, c):
            return const(c.value * 2)

    tup = MakeTuple([const(3), const(4)])
    assert tup.elements == [3, 4]
    walked = collect(tup, lambda n: getattr(n, "value", None) == 4)
    assert len(walked) == 1                                  # visitors still walk into Dims
    doubled = Double().mutate(tup)
    assert doubled.elements == [6, 8] and isinstance(doubled.elements, Dims)
