"""pypto errors are also the builtins the reference raises for the same failure, with the same text and span."""

import pytest

from pypto.errors import InternalError, PyptoError, TypeCheckError, UnsupportedError, ValueCheckError
from pypto.ir.span import Span

SPAN = Span("kernel.py", 12, 5, 12, 9)


@pytest.mark.parametrize("cls,builtins", [
    (TypeCheckError, (TypeError,)),
    (ValueCheckError, (ValueError,)),
    (UnsupportedError, (NotImplementedError, ValueError)),
    (InternalError, (RuntimeError,)),
])
def test_each_error_is_its_builtin_and_keeps_message_and_span(cls, builtins):
    err = cls("the thing is wrong", SPAN, hint="do the other thing")
    for b in builtins:
        assert isinstance(err, b)
        with pytest.raises(b, match=r"kernel\.py:12:5: the thing is wrong \(help: do the other thing\)"):
            raise err
    assert isinstance(err, PyptoError) and err.span is SPAN
    assert "  --> kernel.py:12:5" in err.render()


def test_a_rejected_collective_target_is_caught_as_value_error():
    import pypto.language as pl
    import pypto.language.distributed as pld
    from pypto.passes.lower_composite_ops import lower_composite_ops

    T = pld.DistributedTensor[[2, 3, 4], pl.FP32, pl.TensorView(stride=[16, 4, 1])]
    S = pld.DistributedTensor[[2, 1], pl.INT32]

    @pl.program
    class Strided:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, data: pl.InOut[T], signal: pl.InOut[S]) -> T:
            data = pld.tensor.allreduce(data, signal)
            return data

    with pytest.raises(ValueError, match="strided target") as err:
        lower_composite_ops()(Strided)
    assert isinstance(err.value, UnsupportedError)
