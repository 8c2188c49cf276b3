"""InjectGMPipeBuffer (a2a3): pipe kernels, their Group / Spmd wrappers get a `__gm_pipe_buffer` Out
param; the orchestration creates one buffer per call site, sized to hold every ring. a5 and
kernels without pipes are unchanged."""

import pypto.language as pl
from pypto import ir
from pypto.passes.context import PassContext
from pypto.pypto_core import passes


@pl.program
class Before:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_v2c_slot_buffer", size=2048, base=-1)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=512, slot_num=4, id=1)

    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=2048, base=-1)
        v2c: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_v2c_slot_buffer", peer_func="k_aic")
        pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=512, slot_num=4, id=1)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32],
          out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.k_aic(x, out)
        r: pl.Tensor[[16, 16], pl.FP32] = self.k_aiv(x, out)
        return r

    @pl.function(type=pl.FunctionType.AIV)
    def plain(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        a: pl.Tensor[[16, 16], pl.FP32] = self.k(x, out)
        b: pl.Tensor[[16, 16], pl.FP32] = self.k(x, a)
        c: pl.Tensor[[16, 16], pl.FP32] = self.plain(x, b)
        return c


# rings: C2V@0 = 2 x 1024, V2C@0 = 2 x 1024, C2V@1 = 4 x 512  →  6144 bytes = 1536 FP32


@pl.program
class Expected:
    @pl.function(type=pl.FunctionType.AIC, attrs={"gm_pipe_offsets": {"c2v@0": 0, "v2c@0": 2048, "c2v@1": 4096}})
    def k_aic(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              __gm_pipe_buffer: pl.Out[pl.Tensor[[1536], pl.FP32]]):
        v2c: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_v2c_slot_buffer", size=2048, base=-1)
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=512, slot_num=4, id=1)

    @pl.function(type=pl.FunctionType.AIV, attrs={"gm_pipe_offsets": {"c2v@0": 0, "v2c@0": 2048, "c2v@1": 4096}})
    def k_aiv(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              __gm_pipe_buffer: pl.Out[pl.Tensor[[1536], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=2048, base=-1)
        v2c: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_v2c_slot_buffer", peer_func="k_aic")
        pl.system.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=1024, slot_num=2)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=512, slot_num=4, id=1)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
          __gm_pipe_buffer: pl.Out[pl.Tensor[[1536], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.k_aic(x, out, __gm_pipe_buffer)
        r: pl.Tensor[[16, 16], pl.FP32] = self.k_aiv(x, out, __gm_pipe_buffer)
        return r

    @pl.function(type=pl.FunctionType.AIV)
    def plain(self, x: pl.Tensor[[16, 16], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        g0: pl.Tensor[[1536], pl.FP32] = pl.tensor.create([1536], dtype=pl.FP32)
        a: pl.Tensor[[16, 16], pl.FP32] = self.k(x, out, g0)
        g1: pl.Tensor[[1536], pl.FP32] = pl.tensor.create([1536], dtype=pl.FP32)
        b: pl.Tensor[[16, 16], pl.FP32] = self.k(x, a, g1)
        c: pl.Tensor[[16, 16], pl.FP32] = self.plain(x, b)
        return c


def _inject(program, platform):
    with PassContext(PassContext.current().instruments, platform=platform):
        return passes.inject_gm_pipe_buffer()(program)


def test_a2a3_threads_the_buffer_up_to_the_orchestration():
    after = _inject(Before, "a2a3")
    ir.assert_structural_equal(after, Expected)
    assert after["k"].params[-1].name_hint == "__gm_pipe_buffer"
    assert after["main"].body is not Before["main"].body


def test_a5_and_kernels_without_pipes_are_unchanged():
    assert _inject(Before, "a5") is Before
    after = _inject(Before, "a2a3")
    assert after["plain"] is Before["plain"]


def test_a_hand_written_buffer_is_kept_and_the_pass_is_idempotent():
    once = _inject(Before, "a2a3")
    assert _inject(once, "a2a3") is once


@pl.program
class SpmdBefore:
    @pl.function(type=pl.FunctionType.AIC)
    def k_aic(self, x: pl.Tensor[[16, 16], pl.FP32]):
        c2v: pl.Scalar[pl.INT32] = pl.system.import_peer_buffer(name="k_c2v_slot_buffer", peer_func="k_aiv")
        pl.system.aic_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=256, slot_num=2)

    @pl.function(type=pl.FunctionType.AIV)
    def k_aiv(self, x: pl.Tensor[[16, 16], pl.FP32]):
        c2v: pl.Scalar[pl.INT32] = pl.system.reserve_buffer(name="k_c2v_slot_buffer", size=512, base=-1)
        pl.system.aiv_initialize_pipe(c2v, pl.const(0, pl.INT32), dir_mask=1, slot_size=256, slot_num=2)

    @pl.function(type=pl.FunctionType.Group)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32]):
        self.k_aic(x)
        self.k_aiv(x)

    @pl.function(type=pl.FunctionType.Spmd, attrs={"core_num": 4})
    def launch(self, x: pl.Tensor[[16, 16], pl.FP32]):
        self.k(x)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32]):
        for i in pl.range(2):
            self.launch(x)


def test_an_spmd_wrapper_forwards_and_a_loop_call_site_gets_its_own_create():
    after = _inject(SpmdBefore, "a2a3")
    for name in ("k_aic", "k_aiv", "k", "launch"):
        p = after[name].params[-1]
        assert p.name_hint == "__gm_pipe_buffer" and after[name].param_directions[-1] is pl.ParamDirection.Out
        assert p.type.shape[0].value == 4 * 128              # core_num 4 x (2 slots x 256 bytes = 128 FP32)
    text = after.as_python()
    assert "self.k(x, __gm_pipe_buffer)" in text and "self.launch(x, gm_pipe_buffer_0)" in text
    loop = after["main"].body.stmts[0] if hasattr(after["main"].body, "stmts") else after["main"].body
    assert "pl.tensor.create([512], dtype=pl.FP32" in ir.python_print(loop)


def test_a_core_num_given_at_the_call_site_sizes_the_regions_too():
    """A launch whose block count rides on the orchestration's call (attrs) rather than the Spmd
    function: the buffer still holds one region per block."""
    from pypto.ir.visitor import IRMutator
    from pypto.passes.inject_gm_pipe_buffer import inject

    class _CallSiteCount(IRMutator):
        def mutate_call(self, c):
            c = self.mutate_children(c)
            named = isinstance(c.op, ir.GlobalVar) and c.op.name == "launch"
            return c.replace(attrs={**c.attrs, "core_num": 3}) if named else c

    launch = SpmdBefore["launch"]
    launch = launch.replace(attrs={k: v for k, v in launch.attrs.items() if k != "core_num"})
    main = SpmdBefore["main"].replace(body=_CallSiteCount().mutate(SpmdBefore["main"].body))
    program = SpmdBefore.with_functions([launch if f.name == "launch" else main if f.name == "main" else f
                                         for f in SpmdBefore.functions.values()])
    after = inject(program)
    assert [after[n].params[-1].type.shape[0].value for n in ("launch", "k", "k_aic")] == [3 * 128] * 3
