"""The reference catalog's ops that came last (issue 13 item 6), compiled and run on the simulator
against numpy: three-input arithmetic, arg-reductions, generators, padded expansion, sort / merge,
gather / scatter by index, mask, byte block and from GM, and the orchestration markers."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PyptoError
from pypto.runtime import run

KERNEL = """
import pypto.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, {params}, out: pl.Out[pl.Tensor[{oshape}, pl.{odt}]]) -> pl.Tensor[{oshape}, pl.{odt}]:
{body}
        out = pl.store(r, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}, out: pl.Out[pl.Tensor[{oshape}, pl.{odt}]]) -> pl.Tensor[{oshape}, pl.{odt}]:
        out = self.kernel({names}, out)
        return out
"""

TENSOR = """
import pypto.language as pl

@pl.program
class T:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}, out: pl.Out[pl.Tensor[{oshape}, pl.{odt}]]) -> pl.Tensor[{oshape}, pl.{odt}]:
{body}
        return out
"""


def _params(inputs: dict) -> tuple:
    params = ", ".join(f"{n}: pl.Tensor[{list(a.shape)}, pl.{_dt(a)}]" for n, a in inputs.items())
    return params, ", ".join(inputs)


def _dt(a) -> str:
    return {np.dtype(np.float32): "FP32", np.dtype(np.int32): "INT32", np.dtype(np.uint32): "UINT32"}[a.dtype]


def _run(template: str, body: str, inputs: dict, want: np.ndarray, **extra):
    params, names = _params(inputs)
    text = template.format(params=params, names=names, oshape=list(want.shape), odt=_dt(want),
                           body="\n".join("        " + line for line in body.strip().splitlines()))
    out = np.zeros_like(want)
    result = run(pl.parse(text))(*inputs.values(), out)
    return out if result is None else result


def _kernel(body, inputs, want):
    return _run(KERNEL, body, inputs, want)


def _tensor(body, inputs, want):
    return _run(TENSOR, "with pl.at(level=pl.Level.CORE_GROUP):\n" + "\n".join("    " + line for line in
                                                                               body.strip().splitlines()), inputs, want)


RNG = np.random.default_rng(5)
A = RNG.uniform(-2, 2, (16, 32)).astype(np.float32)
B = RNG.uniform(-2, 2, (16, 32)).astype(np.float32)
C = RNG.uniform(-2, 2, (16, 32)).astype(np.float32)
LOAD3 = """
ta = pl.load(a, [0, 0], [16, 32])
tb = pl.load(b, [0, 0], [16, 32])
tc = pl.load(c, [0, 0], [16, 32])
"""


# ---------------------------------------------------------------------------- three-input arithmetic
@pytest.mark.parametrize("expr, ref", [
    ("pl.addc(ta, tb, tc)", A + B + C), ("pl.subc(ta, tb, tc)", A - B - C),
    ("pl.addsc(ta, 1.5, tc)", A + np.float32(1.5) + C), ("pl.tile.subsc(ta, 0.25, tc)", A - np.float32(0.25) - C)])
def test_three_input_arithmetic(expr, ref):
    got = _kernel(LOAD3 + f"r = {expr}", {"a": A, "b": B, "c": C}, ref.astype(np.float32))
    np.testing.assert_allclose(got, ref, rtol=1e-6)


# ---------------------------------------------------------------------------- arg-reductions
@pytest.mark.parametrize("name, axis, fn", [("row_argmax", 1, np.argmax), ("row_argmin", 1, np.argmin),
                                            ("col_argmax", 0, np.argmax), ("col_argmin", 0, np.argmin)])
def test_arg_reductions_give_int32_indices(name, axis, fn):
    want = fn(A, axis=axis, keepdims=True).astype(np.int32)
    body = f"ta = pl.load(a, [0, 0], [16, 32])\ntmp = pl.create_tile([16, 32], dtype=pl.FP32)\nr = pl.{name}(ta, tmp)"
    np.testing.assert_array_equal(_kernel(body, {"a": A}, want), want)
    np.testing.assert_array_equal(_tensor(f"r = pl.{name}(a)\nout = pl.assemble(out, r, [0, 0])", {"a": A}, want), want)


def test_arg_reduction_of_a_partly_valid_tile_searches_the_valid_region():
    x = A.copy()
    x[:, 20:] = 100.0                    # outside the valid columns: must not win
    want = np.argmax(x[:, :20], axis=1, keepdims=True).astype(np.int32)
    body = ("ta = pl.load(a, [0, 0], [16, 32], valid_shape=[16, 20])\n"
            "tmp = pl.create_tile([16, 32], dtype=pl.FP32)\nr = pl.row_argmax(ta, tmp)")
    np.testing.assert_array_equal(_kernel(body, {"a": x}, want), want)


# ---------------------------------------------------------------------------- generators
def test_arange_and_descending_ci():
    want = np.arange(7, 7 + 64, dtype=np.int32)[None, :]
    dummy = np.zeros((1, 64), np.int32)
    got = _tensor("r = pl.arange(7, [1, 64])\nout = pl.assemble(out, r, [0, 0])", {"d": dummy}, want)
    np.testing.assert_array_equal(got, want)
    down = (100 - np.arange(64, dtype=np.int32))[None, :]
    got = _kernel("r = pl.tile.ci(100, [1, 64], descending=True)", {"d": dummy}, down)
    np.testing.assert_array_equal(got, down)


@pytest.mark.parametrize("diagonal, upper", [(0, False), (2, False), (-3, True), (0, True)])
def test_tri(diagonal, upper):
    i, j = np.indices((16, 32))
    want = ((j >= i + diagonal) if upper else (j <= i + diagonal)).astype(np.float32)
    got = _kernel(f"r = pl.tri({diagonal}, [16, 32], dtype=pl.FP32, upper={upper})", {"a": A}, want)
    np.testing.assert_array_equal(got, want)


# Philox-4x32-10 known-answer vectors (Random123): counter 0 / key 0 and all-ones counter and key.
KAT = {(0, 0): [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8],
       (0xFFFFFFFF, 0xFFFFFFFF): [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]}


@pytest.mark.parametrize("seed", list(KAT))
def test_random_is_philox_4x32_10(seed):
    s = seed[0]
    want = np.zeros((1, 64), np.uint32)
    got = _kernel(f"r = pl.tile.random({s}, {s}, {s}, {s}, {s}, {s}, [1, 64])", {"a": want}, want)
    assert [int(w) for w in got[0, :4]] == KAT[seed]
    assert len(np.unique(got)) == 64


def test_random_advances_the_counter_per_group_of_four():
    full = np.zeros((1, 64), np.uint32)
    got = _tensor("r = pl.random(3, 4, 0, 0, 0, 0, [1, 64])\nout = pl.assemble(out, r, [0, 0])", {"a": full}, full)
    later = _kernel("r = pl.tile.random(3, 4, 2, 0, 0, 0, [1, 64])", {"a": full}, full)
    np.testing.assert_array_equal(later[0, :56], got[0, 8:])


# ---------------------------------------------------------------------------- expansion
def test_fillpad_expand_pads_around_the_valid_region():
    want = np.zeros((16, 32), np.float32)
    want[:8, :16] = A[:8, :16]
    body = "ta = pl.load(a, [0, 0], [8, 16])\nr = pl.fillpad_expand(ta, [16, 32])"
    np.testing.assert_array_equal(_kernel(body, {"a": A}, want), want)


def test_expand_clone_broadcasts_in_gm():
    row = A[:1].copy()
    got = _run(TENSOR, "c = pl.expand_clone(row, out)\nout = pl.assemble(out, c, [0, 0])", {"row": row}, np.zeros((16, 32), np.float32))
    np.testing.assert_array_equal(got, np.broadcast_to(row, (16, 32)))


def test_the_no_dep_marker_is_the_tensor_itself():
    got = _run(TENSOR, "k = pl.no_dep(a)\nout = pl.assemble(out, k, [0, 0])", {"a": A},
               np.zeros((16, 32), np.float32))
    np.testing.assert_array_equal(got, A)


# ---------------------------------------------------------------------------- sort / merge
def _pairs_golden(values: np.ndarray, idx: np.ndarray, run: int) -> np.ndarray:
    """Each run of `run` elements sorted descending (stable), as interleaved (value, index bits) pairs."""
    out = np.empty((values.shape[0], values.shape[1] * 2), np.float32)
    for r in range(values.shape[0]):
        for b in range(0, values.shape[1], run):
            order = np.argsort(-values[r, b:b + run], kind="stable")
            out[r, 2 * b:2 * (b + run):2] = values[r, b:b + run][order]
            out[r, 2 * b + 1:2 * (b + run):2] = idx[r, b:b + run][order].view(np.float32)
    return out


SRC = RNG.permutation(128 * 8).astype(np.float32).reshape(8, 128) / 7
IDX = np.tile(np.arange(128, dtype=np.uint32), (8, 1))
SORT_LOAD = "s = pl.load(src, [0, 0], [8, 128])\ni = pl.load(idx, [0, 0], [8, 128])\n"


def test_sort32_sorts_each_block_of_32():
    want = _pairs_golden(SRC, IDX, 32)
    got = _kernel(SORT_LOAD + "r = pl.tile.sort32(s, i)", {"src": SRC, "idx": IDX}, want)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_mrgsort_format1_merges_four_runs():
    want = _pairs_golden(SRC, IDX, 128)
    got = _kernel(SORT_LOAD + "r = pl.mrgsort(pl.sort32(s, i), block_len=64)", {"src": SRC, "idx": IDX}, want)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_tensor_sort_then_mask_gather_gives_values_and_indices():
    values = np.sort(SRC, axis=1)[:, ::-1].copy()
    order = np.argsort(-SRC, axis=1, kind="stable").astype(np.uint32)
    body = ("p = pl.mrgsort(pl.sort32(src, idx), block_len=64)\n"
            "v = pl.gather(p, mask_pattern=1)\nk = pl.gather(p, mask_pattern=2, output_dtype=pl.UINT32)\n"
            "out = pl.assemble(out, v, [0, 0])")
    np.testing.assert_array_equal(_tensor(body, {"src": SRC, "idx": IDX}, values), values)
    body = body.replace("out = pl.assemble(out, v, [0, 0])", "out = pl.assemble(out, k, [0, 0])")
    np.testing.assert_array_equal(_tensor(body, {"src": SRC, "idx": IDX}, order), order)


def test_mrgsort_format2_merges_two_sorted_lists():
    halves = [_pairs_golden(SRC[:1, :64], IDX[:1, :64], 64), _pairs_golden(SRC[:1, 64:], IDX[:1, 64:], 64)]
    want = _pairs_golden(SRC[:1], np.concatenate([IDX[:1, :64], IDX[:1, 64:]], axis=1), 128)
    body = ("x = pl.load(a, [0, 0], [1, 128])\ny = pl.load(b, [0, 0], [1, 128])\n"
            "t = pl.create_tile([1, 256], dtype=pl.FP32)\nr = pl.mrgsort(x, y, tmp=t)")
    got = _kernel(body, {"a": halves[0], "b": halves[1]}, want)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    tensor_got = _tensor("r = pl.mrgsort(a, b)\nout = pl.assemble(out, r, [0, 0])", {"a": halves[0], "b": halves[1]},
                         want)
    np.testing.assert_array_equal(tensor_got.view(np.uint32), want.view(np.uint32))


# ---------------------------------------------------------------------------- gather / scatter
def test_tile_gather_by_flat_index():
    index = RNG.integers(0, 16 * 32, (16, 32)).astype(np.int32)
    body = ("ta = pl.load(a, [0, 0], [16, 32])\nti = pl.load(i, [0, 0], [16, 32])\n"
            "tmp = pl.create_tile([16, 32], dtype=pl.INT32)\nr = pl.gather(ta, ti, tmp)")
    np.testing.assert_array_equal(_kernel(body, {"a": A, "i": index}, A.reshape(-1)[index]), A.reshape(-1)[index])


def test_gatherb_takes_32_byte_blocks():
    offsets = (RNG.integers(0, 16 * 32 * 4 // 32, (16, 2)) * 32).astype(np.uint32)
    blocks = A.reshape(-1).view(np.uint8)[offsets[..., None] + np.arange(32)].reshape(16, -1).view(np.float32)
    body = "ta = pl.load(a, [0, 0], [16, 32])\nto = pl.load(o, [0, 0], [16, 2])\nr = pl.gatherb(ta, to)"
    np.testing.assert_array_equal(_kernel(body, {"a": A, "o": offsets}, blocks), blocks)


@pytest.mark.parametrize("oob, fix", [("clamp", lambda i: np.clip(i, 0, 15)), ("wrap", lambda i: i % 16)])
def test_mgather_rows_with_an_out_of_bounds_policy(oob, fix):
    rows = np.array([[3, 0, 15, 17, -1, 8, 2, 20]], np.int32)
    want = A[fix(rows[0])]
    body = f"ti = pl.load(i, [0, 0], [1, 8])\nr = pl.mgather(a, ti, gather_oob=\"{oob}\")"
    np.testing.assert_array_equal(_kernel(body, {"a": A, "i": rows}, want), want)


def test_mgather_elements_zero_outside():
    index = np.array([[0, 5, 511, 512, -4, 40, 1, 2]], np.int32)
    flat = A.reshape(-1)
    want = np.where((index >= 0) & (index < 512), flat[np.clip(index, 0, 511)], 0).astype(np.float32)
    body = "ti = pl.load(i, [0, 0], [1, 8])\nr = pl.mgather(a, ti, coalesce=\"elem\", gather_oob=\"zero\")"
    np.testing.assert_array_equal(_kernel(body, {"a": A, "i": index}, want), want)


def test_mgather_undefined_out_of_bounds_is_an_error():
    index = np.array([[0, 99, 1, 2, 3, 4, 5, 6]], np.int32)
    with pytest.raises(PyptoError, match="tile.mgather: index 99 is outside mem"):
        _kernel("ti = pl.load(i, [0, 0], [1, 8])\nr = pl.mgather(a, ti)", {"a": A, "i": index}, A[:8])


def test_mscatter_writes_gm_elements():
    perm = RNG.permutation(16 * 32).astype(np.int32).reshape(16, 32)
    want = np.zeros(16 * 32, np.float32)
    want[perm.reshape(-1)] = A.reshape(-1)
    text = KERNEL.replace("        out = pl.store(r, [0, 0], out)\n", "")
    params, names = _params({"a": A, "i": perm})
    body = "ta = pl.load(a, [0, 0], [16, 32])\nti = pl.load(i, [0, 0], [16, 32])\nout = pl.mscatter(ta, ti, out)"
    prog = pl.parse(text.format(params=params, names=names, oshape=[16, 32], odt="FP32",
                                body="\n".join("        " + x for x in body.splitlines())))
    out = np.zeros((16, 32), np.float32)
    result = run(prog)(A, perm, out)
    np.testing.assert_array_equal(out if result is None else result, want.reshape(16, 32))


def test_tensor_gather_and_scatter_along_a_dim():
    index = RNG.integers(0, 32, (16, 8)).astype(np.int32)
    want = np.take_along_axis(A, index, axis=1)
    got = _run(TENSOR, "g = pl.gather(a, 1, i)\nout = pl.assemble(out, g, [0, 0])", {"a": A, "i": index}, want)
    np.testing.assert_array_equal(got, want)
    rows = np.stack([RNG.permutation(16)[:4] for _ in range(32)], axis=1).astype(np.int32)   # [4, 32], unique per column
    want = A.copy()
    np.put_along_axis(want, rows, B[:4], axis=0)
    got = _run(TENSOR, "s = pl.scatter(a, 0, i, b)\nout = pl.assemble(out, s, [0, 0])", {"a": A, "i": rows, "b": B}, want)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------- PTO spellings
def test_pto_spellings(tmp_path):
    body = (SORT_LOAD + "p = pl.mrgsort(pl.sort32(s, i), block_len=64)\nv = pl.tile.gather_mask(p, mask_pattern=1)\n"
            "m = pl.tri(0, [8, 128], dtype=pl.FP32)\nr = pl.addc(v, m, v)")
    params, names = _params({"src": SRC, "idx": IDX})
    text = KERNEL.format(params=params, names=names, oshape=[8, 128], odt="FP32",
                         body="\n".join("        " + x for x in body.splitlines()))
    ir.compile(pl.parse(text), output_dir=tmp_path)
    pto = (tmp_path / "ptoas" / "kernel.pto").read_text()
    for spelling in ("pto.tsort32 ins(", "pto.tmrgsort ins(", "maskPattern = #pto.mask_pattern<P0101>",
                     '"pto.ttri"(', "pto.taddc ins("):
        assert spelling in pto, spelling


@pytest.mark.parametrize("pattern, keep", [(3, [0]), (4, [1]), (5, [2]), (6, [3]), (7, [0, 1, 2, 3])])
def test_gather_mask_patterns_pick_columns_of_each_group_of_four(pattern, keep):
    from pypto.runtime.sim.ops import SIM_OPS
    from pypto.runtime.sim.values import TileValue
    src = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    cols = [c for c in range(16) if c % 4 in keep]
    out = TileValue(np.zeros((8, len(cols)), np.float32), (8, len(cols)))
    SIM_OPS["tile.gather_mask"](None, out, TileValue(src, (8, 16)), mask_pattern=pattern)
    np.testing.assert_array_equal(out.data, src[:, cols])


def test_tensor_fillpad_expand_pads_a_gm_tensor():
    small = A[:8, :16].copy()
    want = np.zeros((16, 32), np.float32)
    want[:8, :16] = small
    got = _tensor("r = pl.fillpad_expand(s, [16, 32])\nout = pl.assemble(out, r, [0, 0])", {"s": small}, want)
    np.testing.assert_array_equal(got, want)
