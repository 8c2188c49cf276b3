"""Seed 004 "手写 Group 的共享参数 ABI" (phase 4): hand-written Group members get the Group's signature.

Before / Expected programs for the union signature, output bindings (a member's result traced to
the Group param that carries it), dynamic-dim binding, private adapters and the external-member
rejection."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedError
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, GlobalVar, Var
from pypto.ir.stmt import flatten_to_stmts
from pypto.ir.visitor import collect
from pypto.passes.analysis import calls_in, vars_in_type
from pypto.passes.context import PassContext
from pypto.pypto_core import passes

BOTH = pytest.mark.parametrize("platform", ["a2a3", "a5"])


def _expand(program, platform="a2a3"):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.expand_mixed_kernel()(passes.convert_to_ssa()(program))


def _member_calls(func):
    return [c for c in calls_in(func.body) if isinstance(c.op, GlobalVar)]


@pl.program
class Union:
    @pl.function(type=pl.FunctionType.AIC)
    def cube_side(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        return sink

    @pl.function(type=pl.FunctionType.AIV)
    def vec_side(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Group)
    def mixed(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube_side(q, sink, task)
        result = self.vec_side(out, task)
        return result


@pl.program
class UnionExpected:
    @pl.function(type=pl.FunctionType.AIC)
    def cube_side(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        return sink

    @pl.function(type=pl.FunctionType.AIV)
    def vec_side(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Group)
    def mixed(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube_side(q, sink, out, task)
        result = self.vec_side(q, sink, out, task)
        return result


@BOTH
def test_members_take_the_groups_union_signature(platform):
    after = _expand(Union, platform)
    ir.assert_structural_equal(after, passes.convert_to_ssa()(UnionExpected))
    group = after.get_function("mixed")
    for name in ("cube_side", "vec_side"):
        member = after.get_function(name)
        assert [p.name_hint for p in member.params] == ["q", "sink", "out", "task"]
        assert member.param_directions == group.param_directions
    assert all(list(c.args) == list(group.params) for c in _member_calls(group))


def test_a_canonical_group_is_left_alone():
    after = _expand(UnionExpected)
    ir.assert_structural_equal(after, passes.convert_to_ssa()(UnionExpected))


@pl.program
class Reused:
    @pl.function(type=pl.FunctionType.AIC)
    def cube_side(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
                  task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        imp: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="c2v", peer_func="vec_side")
        pl.system.aic_initialize_pipe(imp, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        return sink

    @pl.function(type=pl.FunctionType.AIV)
    def vec_side(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                 task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        buf: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="c2v", size=2048)
        pl.system.aiv_initialize_pipe(buf, pl.const(0, pl.INT32), dir_mask=1, slot_size=1024, slot_num=2)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def mixed(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube_side(q, sink, task)
        result = self.vec_side(out, task)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 16], pl.FP32], sink: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], task: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        sink = self.cube_side(q, sink, task)
        return self.mixed(q, sink, out, task)


def test_a_member_with_other_callers_gets_a_private_adapter_pair():
    after = _expand(Reused)
    original, before = after.get_function("cube_side"), Reused.get_function("cube_side")
    assert [p.name_hint for p in original.params] == ["q", "sink", "task"]      # other callers keep the ABI
    assert len(after.get_function("vec_side").params) == 2
    group = after.get_function("mixed")
    aic, aiv = after.get_function("mixed_aic_adapter"), after.get_function("mixed_aiv_adapter")
    assert aic.func_type is FunctionType.AIC and aiv.func_type is FunctionType.AIV
    for adapter in (aic, aiv):
        assert [p.name_hint for p in adapter.params] == ["q", "sink", "out", "task"]
        assert adapter.param_directions == group.param_directions
    assert [c.op.name for c in _member_calls(group)] == ["mixed_aic_adapter", "mixed_aiv_adapter"]
    peers = [c.kwargs["peer_func"] for c in calls_in(aic.body) if c.op.name == "system.import_peer_buffer"]
    assert peers == ["mixed_aiv_adapter"]                                      # the adapter's peer is the adapter
    main_calls = [c.op.name for c in _member_calls(after.get_function("main"))]
    assert main_calls == ["cube_side", "mixed"]
    assert len(before.params) == len(original.params)


@pl.program
class Cluster:
    """A pl.cluster whose second kernel reads the first one's tensor result."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], w: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.cluster():
            with pl.at(level=pl.Level.CORE_GROUP):
                t: pl.Tensor[[64, 64], pl.FP32] = pl.matmul(x, w)
            with pl.at(level=pl.Level.CORE_GROUP):
                out = pl.assemble(out, pl.exp(t), [0, 0])
        return out


def _lower_to_expand(program, platform="a2a3"):
    from pypto.passes import PassManager
    with PassContext(PassContext.current().instruments, platform=platform):
        return PassManager().run(program, until="ExpandMixedKernel")


@BOTH
def test_cluster_output_binding_reads_the_producers_group_param(platform):
    after = _lower_to_expand(Cluster, platform)
    group = after.get_function("main_cluster_0")
    names = [p.name_hint for p in group.params]
    calls = _member_calls(group)
    assert len(calls) == 2 and all(list(c.args) == list(group.params) for c in calls)
    producer, consumer = (after.get_function(c.op.name) for c in calls)
    assert producer.func_type is FunctionType.AIC and consumer.func_type is FunctionType.AIV
    assert [p.name_hint for p in consumer.params] == names
    # the consumer's `t` was the producer's result: it is now the Group param the producer stores into
    stores = [c for c in calls_in(producer.body) if c.op.name == "tile.store"]
    written = producer.params.index(stores[0].args[2])
    loads = [c for c in calls_in(consumer.body) if c.op.name == "tile.load"]
    assert loads[0].args[0] is consumer.params[written]


@pl.program
class TupleOutputs:
    @pl.function(type=pl.FunctionType.AIC)
    def produce(self, a: pl.Tensor[[16, 16], pl.FP32], o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                                   pl.Tensor[[16, 16], pl.FP32]]:
        return o2, o1

    @pl.function(type=pl.FunctionType.AIV)
    def consume(self, src: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(src, [0, 0], [16, 16])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32], o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pair = self.produce(a, o1, o2)
        second = pair[1]
        r = self.consume(second, out)
        return r


def test_output_binding_follows_out_of_order_tuple_returns():
    after = _expand(TupleOutputs)
    consume = after.get_function("consume")
    loads = [c for c in calls_in(consume.body) if c.op.name == "tile.load"]
    # produce returns (o2, o1): element 1 is o1, the Group's second param
    assert loads[0].args[0] is consume.params[1] and consume.params[1].name_hint == "o1"


N = pl.dynamic("N")
M = pl.dynamic("M")


@pl.program
class DynamicDims:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[8, M], pl.FP32]):
        pass

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, work: pl.InOut[pl.Tensor[[8, N], pl.FP32]]) -> pl.Tensor[[8, N], pl.FP32]:
        alias: pl.Tensor[[8, N], pl.FP32] = work
        for i, (acc,) in pl.range(2, init_values=(alias,)):
            carried = pl.yield_(acc)
        return carried

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[8, M], pl.FP32],
          work: pl.InOut[pl.Tensor[[8, M], pl.FP32]]) -> pl.Tensor[[8, M], pl.FP32]:
        self.cube(a)
        r = self.vec(work)
        return r


def test_a_members_dynamic_dim_is_bound_to_the_groups_dim():
    after = _expand(DynamicDims)
    vec = after.get_function("vec")
    m_var = DynamicDims.get_function("g").params[0].type.shape[1]
    assert isinstance(m_var, Var)
    types = [v.type for v in collect(vec.body, lambda n: isinstance(n, Var))] + \
        [c.type for c in collect(vec.body, lambda n: isinstance(n, Call))] + list(vec.return_types) + \
        [p.type for p in vec.params]
    symbols = {s.name_hint for t in types for s in vars_in_type(t)}
    assert symbols == {"M"}          # no member-local N is left in any type (params, locals, carries, calls)
    loop = [s for s in flatten_to_stmts(vec.body) if type(s).__name__ == "ForStmt"][0]
    assert loop.iter_args[0].type.shape[1] is m_var and loop.return_vars[0].type.shape[1] is m_var
    assert vec.return_types[0].shape[1] is m_var
    group = after.get_function("g")
    assert _member_calls(group)[1].type.shape[1] is m_var


@pl.program
class External:
    @pl.function(type=pl.FunctionType.AIC, attrs={"external_source": "cube_kernel.cpp"})
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32]):
        pass

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a)
        r = self.vec(out)
        return r


def test_an_external_member_with_a_different_signature_is_rejected():
    with pytest.raises(UnsupportedError, match=r"member cube is external_source.*\(a\) differ.*\(a, out\)") as e:
        _expand(External)
    assert "same signature" in e.value.hint


@pl.program
class ExternalCanonical:
    @pl.function(type=pl.FunctionType.AIC, attrs={"runtime_bound": True})
    def cube(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        pass

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(a, out)
        r = self.vec(out)
        return r


def test_an_external_member_already_on_the_group_abi_is_kept_and_its_peer_normalized():
    after = _expand(ExternalCanonical)
    assert after.get_function("cube") is not None and len(after.get_function("cube").params) == 2
    assert [p.name_hint for p in after.get_function("vec").params] == ["a", "out"]


@pl.program
class NoCarrier:
    @pl.function(type=pl.FunctionType.AIC)
    def produce(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        fresh: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)
        return fresh

    @pl.function(type=pl.FunctionType.AIV)
    def consume(self, src: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = self.produce(a)
        r = self.consume(t, out)
        return r


def test_a_result_without_an_output_carrier_is_reported_not_left_free():
    with pytest.raises(UnsupportedError, match=r"result 0 of produce, which no output parameter carries"):
        _expand(NoCarrier)


@pl.program
class Promoted:
    """Output storage created inside a hand-written Group body moves to the caller."""

    @pl.function(type=pl.FunctionType.AIC)
    def produce(self, a: pl.Tensor[[16, 16], pl.FP32],
                scratch: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return scratch

    @pl.function(type=pl.FunctionType.AIV)
    def consume(self, src: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        scratch: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)
        t = self.produce(a, scratch)
        r = self.consume(t, out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        r = self.g(a, out)
        return r


def test_group_internal_output_storage_becomes_a_group_param_the_caller_allocates():
    after = _expand(Promoted)
    group = after.get_function("g")
    assert [p.name_hint for p in group.params] == ["a", "out", "scratch"]
    assert group.param_directions[2] is pl.ParamDirection.Out
    assert not [c for c in calls_in(group.body) if c.op.name == "tensor.create"]
    main = flatten_to_stmts(after.get_function("main").body)
    assert main[0].value.op.name == "tensor.create" and main[1].value.args[2] is main[0].var
    consume = after.get_function("consume")
    assert [p.name_hint for p in consume.params] == ["a", "out", "scratch"]


@pl.program
class NestedTuple:
    @pl.function(type=pl.FunctionType.AIC)
    def produce(self, a: pl.Tensor[[16, 16], pl.FP32], o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32],
                                                                   pl.Tensor[[16, 16], pl.FP32]]:
        return o1, o2

    @pl.function(type=pl.FunctionType.AIV)
    def consume(self, src: pl.Tensor[[16, 16], pl.FP32],
                out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(src, [0, 0], [16, 16])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def g(self, a: pl.Tensor[[16, 16], pl.FP32], o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pair = self.produce(a, o1, o2)
        nest = (out, pair)
        r = self.consume(nest[1][1], out)
        return r


def test_output_binding_follows_a_local_tuple_and_a_nested_projection():
    after = _expand(NestedTuple)
    consume = after.get_function("consume")
    loads = [c for c in calls_in(consume.body) if c.op.name == "tile.load"]
    assert loads[0].args[0] is consume.params[2] and consume.params[2].name_hint == "o2"
