"""tile.sin / tile.cos → primitive FP32 tile arithmetic (seed 001, "Algorithm (sin / cos rules)").

The recipe, shared by both ops and parameterised by `is_cos`:
  1. k = round(x / π) (sin, half away from zero) or rint(x / π + 0.5) (cos, half to even);
  2. t = x - k·π with π split Cody-Waite style into five parts (PI_V2 + C1..C4), so the
     cancellation loses precision only at the finest scale; cos adds π/2 as a head (after the
     C1 step) and a tail (after C4), each where its magnitude matches its neighbours;
  3. sign = floor(k / 2)·4 - 2·k + 1 = (-1)^k, in six float ops (no integer parity test);
  4. result = sign · t · P(t²), P the degree-9 odd minimax polynomial in Horner form.
sin is 31 statements, cos 34. The constants are FP32 literals matching the upstream CANN
implementation digit for digit; ConstFloat rounds each to float32 exactly as the C++ `f` suffix.
"""

from __future__ import annotations

from pypto.ir.dtypes import FP32, INT32
from pypto.ir.enums import CastMode
from pypto.ir.expr import Call, Expr
from pypto.passes.lower_composite_ops.builder import LoweringBuilder

PI_INV = 0.31830988732818603515625            # 1/π
PI_V2 = 3.140625                               # π, Cody-Waite head (exact in 8 bits)
PI_C1 = 0.0009670257568359375                  # π split 1
PI_C2 = 6.2771141529083251953125e-7            # π split 2
PI_C3 = 1.21644916362129151821e-10             # π split 3
PI_C4 = -1.0290623200529979163e-13             # π split 4
PI_HALF_HEAD = 1.57079637050628662109375       # π/2 head (cos only)
PI_HALF_TAIL = -4.371139000189375e-8           # π/2 tail (cos only)
HALF, M4, NEG2, ONE = 0.5, 4.0, -2.0, 1.0
R0 = 2.604926501e-6                            # Horner coefficient of t^9
R1 = -1.980894471e-4                           # t^7
R2 = 8.333049340e-3                            # t^5
R3 = -1.666665792e-1                           # t^3

_PI_PARTS = (("k_pi_v2", "t0", PI_V2), ("k_pi_c1", "t1", PI_C1), ("k_pi_c2", "t2", PI_C2),
             ("k_pi_c3", "t3", PI_C3), ("k_pi_c4", "t4", PI_C4))


def _reduce(b: LoweringBuilder, x: Expr, k_f: Expr, is_cos: bool) -> Expr:
    """t = x - k·π (+ π/2 for cos), one Cody-Waite part per step."""
    t = x
    for qual, t_name, part in _PI_PARTS:
        t = b.bind(t_name, b.sub(t, b.bind(qual, b.muls(k_f, part))))
        if is_cos and t_name == "t1":
            t = b.bind("t1h", b.adds(t, PI_HALF_HEAD))
    if is_cos:
        t = b.bind("t4t", b.adds(t, PI_HALF_TAIL))
    return t


def _sign(b: LoweringBuilder, k_f: Expr) -> Expr:
    """(-1)^k = floor(k/2)·4 - 2k + 1: k = 2m + r gives 4m - 4m - 2r + 1 = 1 - 2r."""
    half_k = b.bind("half_k", b.muls(k_f, HALF))
    floor_i = b.bind("floor_hk_i", b.cast(half_k, INT32, CastMode.floor))
    floor_f = b.bind("floor_hk_f", b.cast(floor_i, FP32, CastMode.none))
    floor_x4 = b.bind("floor_x4", b.muls(floor_f, M4))
    neg2_k = b.bind("neg2_k", b.muls(k_f, NEG2))
    sign_pre = b.bind("sign_pre", b.add(floor_x4, neg2_k))
    return b.bind("sign", b.adds(sign_pre, ONE))


def _horner(b: LoweringBuilder, t: Expr) -> Expr:
    """t · P(t²), P(u) = (((R0·u + R1)·u + R2)·u + R3)·u + 1."""
    t2 = b.bind("t2sq", b.mul(t, t))
    p = b.bind("p_r1", b.adds(b.bind("p_r0", b.muls(t2, R0)), R1))
    p = b.bind("p_r2", b.adds(b.bind("p_t2_r1", b.mul(p, t2)), R2))
    p = b.bind("p_r3", b.adds(b.bind("p_t2_r2", b.mul(p, t2)), R3))
    p = b.bind("p_one", b.adds(b.bind("p_t2_r3", b.mul(p, t2)), ONE))
    return b.bind("t_p", b.mul(t, p))


def lower_sin_cos(x: Expr, b: LoweringBuilder, is_cos: bool) -> Call:
    scaled = b.bind("pi_inv_x", b.muls(x, PI_INV))
    if is_cos:
        # +0.5 then half-to-even: k is the multiple of π whose midpoint is nearest x, so t ∈ [-π/2, π/2]
        k_i = b.bind("k_i", b.cast(b.bind("k_pre", b.adds(scaled, HALF)), INT32, CastMode.rint))
    else:
        # half away from zero keeps the reduction symmetric about 0
        k_i = b.bind("k_i", b.cast(scaled, INT32, CastMode.round))
    k_f = b.bind("k_f", b.cast(k_i, FP32, CastMode.none))
    t = _reduce(b, x, k_f, is_cos)
    sign = _sign(b, k_f)
    return b.mul(sign, _horner(b, t))


def lower_sin_rule(call: Call, args: tuple, b: LoweringBuilder) -> Expr:
    return lower_sin_cos(args[0], b, is_cos=False)


def lower_cos_rule(call: Call, args: tuple, b: LoweringBuilder) -> Expr:
    return lower_sin_cos(args[0], b, is_cos=True)
