"""Every reference dtype exists; numpy / ml_dtypes backing where one exists; a clear error where not."""

import numpy as np
import pytest

from pypto.errors import UnsupportedError
from pypto.ir import dtypes


@pytest.mark.parametrize("name", ["BOOL", "INT4", "UINT4", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32",
                                  "INT64", "UINT64", "FP16", "BF16", "FP32", "FP4", "FP8E4M3FN", "FP8E5M2",
                                  "FP8E8M0", "INDEX", "TASK_ID"])
def test_backed_dtypes_round_trip_through_numpy(name):
    d = dtypes.DataType.from_name(name)
    arr = np.zeros(4, dtype=d.to_numpy())
    assert arr.dtype.itemsize == d.get_byte()


@pytest.mark.parametrize("name", ["HF4", "HF8"])
def test_unbacked_dtypes_raise_a_clear_error(name):
    with pytest.raises(UnsupportedError, match=name):
        dtypes.DataType.from_name(name).to_numpy()


def test_from_numpy_prefers_plain_names():
    assert dtypes.DataType.from_numpy(np.int64) is dtypes.INT64
    assert dtypes.DataType.from_numpy(np.float32) is dtypes.FP32


def test_reference_import_paths_exist():
    from pypto.ir.instruments import make_roundtrip_instrument
    from pypto.ir.pass_manager import OptimizationStrategy, PassManager
    from pypto.pypto_core import passes

    names = PassManager.get_strategy(OptimizationStrategy.Default).pass_names()
    assert "ConvertTensorToTileOps" in names and callable(passes.convert_to_ssa())
    assert type(make_roundtrip_instrument()).__name__ == "RoundtripInstrument"
