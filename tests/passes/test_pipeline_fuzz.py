"""Random tensor-level kernels (re-assignments inside nested loops and ifs) through the whole
Default pipeline under ROUNDTRIP verification, run on the simulator and compared with numpy.

It guards the passes whose bugs show up only as wrong numbers: ConvertToSSA's carries and phis,
outlining live-ins / live-outs, and InitMemRef's buffer sharing across loop iterations.
"""

import random

import numpy as np
import pytest

import pypto.language as pl  # noqa: F401  (the generated source imports it too)
from pypto.passes import PassContext, VerificationLevel

N_VARS = 4


def _statements(rng, depth, loop_vars, count):
    out = []
    for _ in range(count):
        r = rng.random()
        if r < 0.2 and depth < 3:
            lv = f"i{depth}"
            out.append(f"for {lv} in pl.range({rng.randint(1, 3)}):")
            out += ["    " + s for s in _statements(rng, depth + 1, loop_vars + [lv], rng.randint(1, 3))]
        elif r < 0.4 and depth < 3 and loop_vars:
            out.append(f"if {rng.choice(loop_vars)} == 1:")
            out += ["    " + s for s in _statements(rng, depth + 1, loop_vars, rng.randint(1, 2))]
            if rng.random() < 0.5:
                out.append("else:")
                out += ["    " + s for s in _statements(rng, depth + 1, loop_vars, rng.randint(1, 2))]
        else:
            i, j, k = (rng.randrange(N_VARS) for _ in range(3))
            op = rng.choice(["add", "sub", "maximum", "mul", "scale"])
            out.append(f"v{i} = pl.mul(v{j}, 0.5)" if op == "scale" else f"v{i} = pl.{op}(v{j}, v{k})")
    return out


def _program_lines(seed):
    rng = random.Random(seed)
    return (["v0 = pl.add(x, x)", "v1 = pl.mul(x, 0.25)", "v2 = pl.sub(x, v1)", "v3 = pl.maximum(v0, v2)"]
            + _statements(rng, 0, [], rng.randint(3, 8))
            + ["out[:] = pl.add(pl.add(v0, v1), pl.add(v2, v3))"])


def _orchestration_lines(seed):
    """Orchestration loops around several pl.at scopes: tensors flow between kernels through GM."""
    rng = random.Random(seed)

    def blocks(depth, loop_vars, count):
        out = []
        for _ in range(count):
            if rng.random() < 0.35 and depth < 2:
                lv = f"j{depth}"
                out.append(f"for {lv} in pl.range({rng.randint(1, 3)}):")
                out += ["    " + s for s in blocks(depth + 1, loop_vars + [lv], rng.randint(1, 3))]
            else:
                out.append("with pl.at(level=pl.Level.CORE_GROUP):")
                out += ["    " + s for s in _statements(rng, 1, loop_vars, rng.randint(1, 3))]
        return out

    return (["with pl.at(level=pl.Level.CORE_GROUP):", "    v0 = pl.add(x, x)", "    v1 = pl.mul(x, 0.25)",
             "    v2 = pl.sub(x, v1)", "    v3 = pl.maximum(v0, v2)"]
            + blocks(0, [], rng.randint(2, 5))
            + ["with pl.at(level=pl.Level.CORE_GROUP):", "    out[:] = pl.add(pl.add(v0, v1), pl.add(v2, v3))"])


class _Scope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _NumpyPl:
    """Just enough of `pl` to run the same lines on numpy as the reference."""
    add, sub, maximum, range = staticmethod(np.add), staticmethod(np.subtract), staticmethod(np.maximum), range

    class Level:
        CORE_GROUP = None

    @staticmethod
    def mul(a, b):
        return a * b

    @staticmethod
    def at(**_kwargs):
        return _Scope()


def _reference(lines, x):
    env = {"pl": _NumpyPl, "x": x, "out": np.zeros_like(x)}
    exec("\n".join(line.replace("out[:] =", "out[...] =") for line in lines), env)
    return env["out"]


def _build(lines, path, scoped=True):
    head = "        with pl.at(level=pl.Level.CORE_GROUP):\n" if scoped else ""
    indent = " " * (12 if scoped else 8)
    src = ("import pypto.language as pl\n\n\n@pl.program\nclass Fuzz:\n    @pl.function\n"
           "    def main(self, x: pl.Tensor[[16, 64], pl.FP32],\n"
           "             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:\n"
           + head + "".join(f"{indent}{line}\n" for line in lines) + "        return out\n")
    path.write_text(src)
    ns: dict = {}
    exec(compile(src, str(path), "exec"), ns)
    return ns["Fuzz"]


def _check(lines, seed, tmp_path, scoped):
    from pypto.runtime import RunConfig, run
    x = np.random.default_rng(seed).standard_normal((16, 64)).astype(np.float32)
    with np.errstate(all="ignore"):
        want = _reference(lines, x)            # float32, the simulator's arithmetic
    program = _build(lines, tmp_path / f"fuzz_{seed}.py", scoped)
    out = np.zeros_like(x)
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        run(program, x, out, config=RunConfig())
    # Both sides run the same float32 element-wise ops, so overflow to inf / nan must match
    # exactly; finite values are compared with a tolerance scaled to their magnitude.
    finite = np.isfinite(want)
    np.testing.assert_array_equal(out[~finite], want[~finite], err_msg="\n".join(lines))
    scale = np.abs(want[finite]).max() if finite.any() else 0.0
    np.testing.assert_allclose(out[finite], want[finite], rtol=1e-5, atol=1e-6 * (1 + scale),
                               err_msg="\n".join(lines))


@pytest.mark.parametrize("seed", range(24))
def test_random_kernel_matches_numpy(seed, tmp_path):
    _check(_program_lines(seed), seed, tmp_path, scoped=True)


@pytest.mark.parametrize("seed", range(12))
def test_random_orchestration_matches_numpy(seed, tmp_path):
    _check(_orchestration_lines(seed), seed, tmp_path, scoped=False)
