"""A scalar named only by a type (a received tile's valid shape) survives outlining and the AIV-side DCE.

`valid = pl.min(ctx - j * BS, BS)` is read by the cube's key load and, after the split, only by the
valid shape in the type of the tile the vector side pops. Dropping it (or leaving the type naming the
orchestration's `valid`) made PTO codegen fail with "'valid' is used before its definition".
"""

import pypto.language as pl
from pypto.codegen.pto import generate
from pypto.language import parse
from pypto.passes.analysis import defined_vars, vars_in_type
from pypto.runtime.compile import lower
from pypto import ir

BS, D = 64, 64


@pl.program
class MaskedScores:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, q: pl.Tensor[[16, 64], pl.FP16], k: pl.Tensor[[256, 64], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 256], pl.FP32]], ctx: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 256], pl.FP32]:
        for j in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP):
                valid = pl.min(ctx - j * BS, BS)
                kj = pl.slice(k, [BS, D], [j * BS, 0], valid_shape=[valid, D])
                s = pl.matmul(q, kj, b_trans=True, out_dtype=pl.FP32)
                sp = pl.fillpad(s, pad_value=pl.PadValue.min)
                out = pl.assemble(out, pl.exp(sp), [0, j * BS])
        return out


def test_every_var_a_kernel_type_names_is_defined_in_that_kernel():
    lowered = lower(MaskedScores, platform="a2a3")
    for f in lowered.functions.values():
        known = set(f.params) | set(defined_vars(f.body))
        for v in defined_vars(f.body):
            missing = [d.name_hint for d in vars_in_type(v.type) if d not in known]
            assert not missing, f"{f.name}: type of {v.name_hint} names undefined {missing}"
    aiv = generate(lowered)["main_incore_0_aiv"]          # used to fail: 'valid' used before its definition
    assert "pto.tpop" in aiv or "tpop" in aiv
    ir.assert_structural_equal(lowered, parse(lowered.as_python()))
