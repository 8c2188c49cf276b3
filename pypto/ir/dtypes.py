"""Data types of the IR and their numpy / ml_dtypes backing.

Each DataType is a singleton (`DataType.FP32 is DataType.FP32`), printed as `pl.FP32`.
`to_numpy()` gives the numpy dtype the simulator stores it in; a type the simulator cannot
represent (HF4 / HF8 have no numpy format) raises an UnsupportedError that names it.

ml_dtypes (BF16, FP8, FP4, INT4 / UINT4) is imported on the first `to_numpy()` of such a type, not
with this module: its extension takes about a second to load, and most programs never need it.
"""

from __future__ import annotations

import sys
from typing import Optional

import numpy as np


def _ml_dtypes():
    import ml_dtypes
    return ml_dtypes


class DataType:
    __slots__ = ("name", "bits", "kind", "_np_name")
    _by_name: dict = {}

    def __init__(self, name: str, bits: int, kind: str, np_name: Optional[str]):
        self.name = name
        self.bits = bits
        self.kind = kind          # "float" | "int" | "uint" | "bool" | "index" | "handle"
        self._np_name = np_name
        DataType._by_name[name] = self

    # -- classification -------------------------------------------------
    def is_float(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        """Integer-valued (signed, unsigned or INDEX); BOOL is not an int here."""
        return self.kind in ("int", "uint", "index")

    def is_signed(self) -> bool:
        return self.kind in ("int", "index", "float")

    def get_byte(self) -> int:
        """Byte size; 4-bit types round up to 1 (they pack two per byte in memory)."""
        return max(1, (self.bits + 7) // 8)

    def get_bit(self) -> int:
        return self.bits

    # -- numpy backing ----------------------------------------------------
    def to_numpy(self) -> np.dtype:
        if self._np_name is None:
            from pypto.errors import UnsupportedError
            raise UnsupportedError(f"dtype {self.name} has no numpy representation, so the simulator cannot hold it",
                                   hint="use FP16/BF16/FP32 or an FP8 format for simulated kernels")
        if self._np_name.startswith("ml:"):
            return np.dtype(getattr(_ml_dtypes(), self._np_name[3:]))
        return np.dtype(self._np_name)

    @staticmethod
    def from_name(name: str) -> "DataType":
        return DataType._by_name[name]

    @staticmethod
    def from_numpy(dt) -> "DataType":
        dt = np.dtype(dt)
        ml_loaded = "ml_dtypes" in sys.modules      # no array has an ml_dtypes dtype before it loads
        for d in _NUMPY_PREFERENCE:
            if d._np_name is None or (d._np_name.startswith("ml:") and not ml_loaded):
                continue
            if d.to_numpy() == dt:
                return d
        from pypto.errors import TypeCheckError
        raise TypeCheckError(f"numpy dtype {dt} has no pypto DataType")

    def __repr__(self) -> str:
        return f"pl.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (DataType.from_name, (self.name,))


BOOL = DataType("BOOL", 8, "bool", "bool")
INT4 = DataType("INT4", 4, "int", "ml:int4")
UINT4 = DataType("UINT4", 4, "uint", "ml:uint4")
INT8 = DataType("INT8", 8, "int", "int8")
UINT8 = DataType("UINT8", 8, "uint", "uint8")
INT16 = DataType("INT16", 16, "int", "int16")
UINT16 = DataType("UINT16", 16, "uint", "uint16")
INT32 = DataType("INT32", 32, "int", "int32")
UINT32 = DataType("UINT32", 32, "uint", "uint32")
INT64 = DataType("INT64", 64, "int", "int64")
UINT64 = DataType("UINT64", 64, "uint", "uint64")
FP16 = DataType("FP16", 16, "float", "float16")
BF16 = DataType("BF16", 16, "float", "ml:bfloat16")
FP32 = DataType("FP32", 32, "float", "float32")
FP64 = DataType("FP64", 64, "float", "float64")
FP4 = DataType("FP4", 4, "float", "ml:float4_e2m1fn")
FP8E4M3FN = DataType("FP8E4M3FN", 8, "float", "ml:float8_e4m3fn")
FP8E5M2 = DataType("FP8E5M2", 8, "float", "ml:float8_e5m2")
FP8E8M0 = DataType("FP8E8M0", 8, "float", "ml:float8_e8m0fnu")
HF4 = DataType("HF4", 4, "float", None)
HF8 = DataType("HF8", 8, "float", None)
INDEX = DataType("INDEX", 64, "index", "int64")
TASK_ID = DataType("TASK_ID", 64, "handle", "int64")

for _d in list(DataType._by_name.values()):
    setattr(DataType, _d.name, _d)

ALL_DTYPES = tuple(DataType._by_name.values())
# When mapping numpy → DataType, prefer the plain names over INDEX / TASK_ID aliases.
_NUMPY_PREFERENCE = tuple(d for d in ALL_DTYPES if d not in (INDEX, TASK_ID))
