"""Pass, PassContext, instruments and the verification levels."""

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import InternalError, ValueCheckError
from pypto.ir import ConstInt, EvalStmt, FunctionType as FT, Program, SeqStmts
from pypto.passes import (CallbackInstrument, IRProperty, Pass, PassContext, PassProperties, TimingInstrument,
                          VerificationInstrument, VerificationLevel, VerificationMode, verify_level_from_env)
from pypto.pypto_core import passes


@pl.program
class Small:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        y: pl.Tensor[[16], pl.FP32] = pl.add(x, x)
        return y


def test_factories_name_their_passes():
    assert passes.convert_to_ssa().get_name() == "ConvertToSSA"
    p = passes.convert_tensor_to_tile_ops()
    assert p.get_name() == "ConvertTensorToTileOps"
    assert p.get_required_properties() == {IRProperty.SSAForm, IRProperty.SplitIncoreOrch,
                                           IRProperty.NormalizedStmtStructure}
    assert IRProperty.IncoreTileOps in p.get_produced_properties()


@pytest.mark.parametrize("raw, level", [("", VerificationLevel.BASIC), ("none", VerificationLevel.NONE),
                                        ("Basic", VerificationLevel.BASIC), ("ROUNDTRIP", VerificationLevel.ROUNDTRIP)])
def test_env_selects_verification_level(monkeypatch, raw, level):
    monkeypatch.setenv("PYPTO_VERIFY_LEVEL", raw)
    assert verify_level_from_env() is level
    assert PassContext().verification_level is level
    assert PassContext(verification_level=VerificationLevel.NONE).verification_level is VerificationLevel.NONE


def test_bad_env_level_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PYPTO_VERIFY_LEVEL", "paranoid")
    with pytest.raises(ValueCheckError, match="PYPTO_VERIFY_LEVEL='paranoid'.*none, basic or roundtrip"):
        verify_level_from_env()


def test_contexts_nest_and_restore():
    outer = PassContext(platform="a5")
    assert PassContext.current().platform == "a2a3"
    with outer:
        assert PassContext.current() is outer
        with PassContext(platform="a2a3") as inner:
            assert PassContext.current() is inner
            assert PassContext.current().get_platform().name == "a2a3"
        assert PassContext.current().get_platform().name == "a5"
    assert PassContext.current().platform == "a2a3"


def test_instruments_see_every_pass_in_order():
    seen = []
    timing = TimingInstrument()
    cb = CallbackInstrument(before=lambda p, prog: seen.append(("before", p.name)),
                            after=lambda p, prog: seen.append(("after", p.name)))
    with PassContext([cb, timing], verification_level=VerificationLevel.NONE):
        passes.simplify()(passes.convert_to_ssa()(Small))
    assert seen == [("before", "ConvertToSSA"), ("after", "ConvertToSSA"), ("before", "Simplify"),
                    ("after", "Simplify")]
    assert [name for name, _sec in timing.timings] == ["ConvertToSSA", "Simplify"]
    assert "Simplify" in timing.report()


def _broken_pass(produced):
    """A pass that claims a property it does not establish."""
    return Pass("Broken", lambda prog: prog, PassProperties(produced=produced))


def test_verification_instrument_catches_false_produced_claim():
    with PassContext([VerificationInstrument(VerificationMode.AFTER)]):
        with pytest.raises(InternalError, match="after Broken: property IncoreTileOps does not hold: .*tensor.add"):
            _broken_pass({IRProperty.IncoreTileOps})(Small)


def test_verification_instrument_checks_required_before():
    needs = Pass("NeedsTiles", lambda prog: prog, PassProperties(required={IRProperty.IncoreTileOps}))
    with PassContext([VerificationInstrument(VerificationMode.BEFORE)]):
        with pytest.raises(InternalError, match="before NeedsTiles: property IncoreTileOps"):
            needs(Small)
    with PassContext(verification_level=VerificationLevel.NONE):
        assert needs(Small) is Small


def test_roundtrip_instrument_reports_pass_and_difference():
    # an expression statement of a bare constant prints as `1`, which the parser drops as a no-op
    def add_noop(prog):
        f = prog["k"]
        return prog.with_functions([f.replace(body=SeqStmts([EvalStmt(ConstInt(1)), *f.body.stmts]))])

    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        with pytest.raises(InternalError, match="after AddNoop: the printed IR parses to a different program"):
            Pass("AddNoop", add_noop)(Small)


def test_roundtrip_instrument_skips_only_a_pass_that_returned_its_input():
    """An unchanged program (the very object the pass got) was checked already; any other is checked."""
    from pypto.passes.instruments import RoundtripInstrument
    parsed = []

    def counting_parse(text):
        parsed.append(text)
        return pl.parse(text)

    def rebuild(prog):
        return prog.with_functions(list(prog.functions.values()))

    inst = RoundtripInstrument(parse=counting_parse)
    with PassContext(instruments=[inst]):
        p1 = Pass("Rebuild", rebuild)(Small)
        Pass("Identity", lambda prog: prog)(p1)
        Pass("RebuildAgain", rebuild)(p1)
    assert len(parsed) == 2


def test_roundtrip_instrument_without_a_parser_is_a_clear_error():
    import threading
    from pypto.passes.instruments import RoundtripInstrument
    errors = []

    def run():               # a fresh thread sees no enclosing context, hence no parser
        try:
            with PassContext(instruments=[RoundtripInstrument()], verification_level=VerificationLevel.NONE):
                Pass("Rebuild", lambda prog: prog.with_functions(list(prog.functions.values())))(Small)
        except InternalError as e:
            errors.append(str(e))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert len(errors) == 1 and "after Rebuild: roundtrip verification has no parser" in errors[0]


def test_nested_context_inherits_the_parser():
    sentinel = object()
    with PassContext(parse=lambda text: sentinel):
        with PassContext(verification_level=VerificationLevel.BASIC) as inner:
            assert inner.parser()("") is sentinel


def test_verify_properties_helper():
    passes.verify_properties({IRProperty.SSAForm}, Small)
    with pytest.raises(InternalError, match="IncoreTileOps"):
        passes.verify_properties({IRProperty.IncoreTileOps}, Small, "test")


def test_run_passes_dump_needs_output_dir():
    pm = passes.PassManager.get_strategy(passes.OptimizationStrategy.Default)
    with pytest.raises(ValueCheckError, match="output_dir"):
        pm.run_passes(Small, dump_ir=True)
