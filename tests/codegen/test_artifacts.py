"""The build directory: reference layout, kernel_config, readable orchestration, and reloading with from_dir."""

import numpy as np
import pytest

from pypto import ir
from pypto.codegen.kernel_config import read_kernel_config
from pypto.codegen.pto.verify import check_well_formed
from pypto.errors import ValueCheckError
from pypto.runtime import CompiledProgram

from tests.codegen.programs import LoopCarries, MixedMatmulRelu


@pytest.fixture(scope="module")
def mixed_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed")
    return ir.compile(MixedMatmulRelu, output_dir=out, dump_passes=True), out


def _mixed_inputs():
    import ml_dtypes
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 128)).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((128, 128)).astype(ml_dtypes.bfloat16)
    return x, y, np.maximum(x.astype(np.float32) @ y.astype(np.float32), 0)


def test_build_dir_has_the_reference_layout(mixed_build):
    _, out = mixed_build
    for sub in ("passes_dump", "ptoas", "orchestration", "report"):
        assert (out / sub).is_dir(), sub
    assert (out / "passes_dump" / "00_frontend.py").is_file()
    assert sorted(p.name for p in (out / "ptoas").iterdir()) == ["mm_aic.pto", "mm_aiv.pto"]
    assert sorted(p.name for p in (out / "orchestration").iterdir()) == ["MixedMatmulRelu.py", "main.sim.py"]
    assert "mm_aic" in (out / "report" / "memory.txt").read_text()


def test_kernel_config_lists_kernels_core_types_and_signatures(mixed_build):
    _, out = mixed_build
    cfg = read_kernel_config(out / "kernel_config.py")
    kernels = {k["name"]: k for k in cfg["KERNELS"]}
    assert kernels["mm_aic"]["core_type"] == "aic" and kernels["mm_aiv"]["core_type"] == "aiv"
    assert kernels["mm_aic"]["signature"] == ["IN", "IN", "OUT", "OUT"]     # a2a3: + __gm_pipe_buffer
    assert kernels["mm_aiv"]["source"] == "ptoas/mm_aiv.pto" and (out / kernels["mm_aiv"]["source"]).is_file()
    assert sorted(k["func_id"] for k in cfg["KERNELS"]) == [0, 1]
    assert cfg["GROUPS"] == [{"name": "mm", "kind": "Group", "members": ["mm_aic", "mm_aiv"],
                              "signature": ["IN", "IN", "OUT", "OUT"]}]
    assert cfg["ORCHESTRATION"]["function_name"] == "main"
    assert cfg["RUNTIME_CONFIG"]["runtime"] == "tensormap_and_ringbuffer"
    assert cfg["PYPTO"]["platform"] == "a2a3sim" and cfg["PYPTO"]["backend_type"] == "Ascend910B"


def test_orchestration_artifact_is_the_host_code_that_runs_and_reads_as_task_submission(mixed_build):
    compiled, out = mixed_build
    path = out / "orchestration" / "main.sim.py"
    text = path.read_text()
    assert text.startswith("# Orchestration `main` of program `MixedMatmulRelu`: the host code the simulator runs.")
    assert "#   _sim_task_mm             mm: Group = mm_aic (AIC) + mm_aiv (AIV); x: In, y: In, out_0: Out, " \
           "__gm_pipe_buffer: Out\n" in text
    assert "def main(_sim_ctx, x, y):" in text
    assert "out_0_1 = _sim_ctx.submit(_sim_task_mm, (x, y, out_0, gm_pipe_buffer_0, ))" in text
    code = compiled.sim.functions["main"]
    assert code.source == text and code.fn.__code__.co_filename == str(path)

    class Recorder:                                 # the code that runs, driven by a context that logs
        def __init__(self):
            self.log = []

        def create_tensor(self, shape, dtype):
            self.log.append(("alloc", shape, np.dtype(dtype).name))
            return f"t{len(self.log)}"

        def window_wait(self):
            return None

        def submit(self, site, args):
            self.log.append(("submit", site.callee, args, site.directions))
            return args[2]

    rt = Recorder()
    run = code.fn(rt, "X", "Y")
    with pytest.raises(StopIteration) as done:
        while True:
            next(run)
    assert rt.log == [("alloc", (16, 128), "float32"), ("alloc", (4096,), "float32"),
                      ("submit", "mm", ("X", "Y", "t1", "t2"), ("in", "in", "out", "out"))]
    assert done.value.value == "t1"


def test_from_dir_reloads_a_program_that_runs(mixed_build):
    compiled, out = mixed_build
    reloaded = CompiledProgram.from_dir(out)
    assert reloaded.param_names == ["x", "y"] == compiled.param_names
    assert reloaded.platform == "a2a3sim" and reloaded.backend_type == "Ascend910B"
    assert reloaded.has_return and reloaded.output_indices == compiled.output_indices
    assert reloaded.output_dir == out and reloaded.program.name == "MixedMatmulRelu"
    ir.assert_structural_equal(reloaded.lowered, compiled.lowered)
    x, y, want = _mixed_inputs()
    np.testing.assert_allclose(reloaded(x, y), want, rtol=1e-5, atol=1e-4)
    assert reloaded["main"].entry == "main" and CompiledProgram.load(out).entries == ["main"]


def test_from_dir_in_place_call(tmp_path):
    ir.compile(LoopCarries, output_dir=tmp_path)
    compiled = CompiledProgram.from_dir(tmp_path)
    assert compiled.param_names == ["x", "out"] and compiled.output_indices == [1]
    x = np.random.default_rng(3).standard_normal((64, 64), dtype=np.float32)
    out = np.zeros_like(x)
    compiled(x, out)
    acc = x.copy()
    for i in range(4):
        acc = acc + x
        if i < 2:
            acc = acc * 2
    np.testing.assert_allclose(out, acc + 4.0, rtol=1e-5)


def test_from_dir_of_something_else_is_a_clear_error(tmp_path):
    with pytest.raises(ValueCheckError, match="kernel_config.py does not exist"):
        CompiledProgram.from_dir(tmp_path)


def test_every_pto_of_a_build_is_well_formed(mixed_build):
    _, out = mixed_build
    for p in (out / "ptoas").glob("*.pto"):
        assert check_well_formed(p.read_text()) == [], p.name


def test_spmd_launch_in_the_orchestration_artifact(tmp_path):
    from tests.codegen.programs import SpmdBlocks
    compiled = ir.compile(SpmdBlocks, output_dir=tmp_path)
    text = (tmp_path / "orchestration" / "main.sim.py").read_text()
    assert "out_1 = _sim_ctx.submit(_sim_task_main_spmd_0, (x, out, ))" in text
    assert "#   _sim_task_main_spmd_0    main_spmd_0: Spmd = main_incore_0 (AIV) (core_num=4, sync_start=True); " \
           "x: In, out: Out\n" in text
    [site] = compiled.sim.functions["main"].sites
    assert (site.callee, site.directions, site.core_num) == ("main_spmd_0", ("in", "out"), 4)
    pto = (tmp_path / "ptoas" / "main_incore_0.pto").read_text()
    assert "%__pypto_spmd_block_idx: i32, %__pypto_spmd_block_num: i32)" in pto
    assert check_well_formed(pto) == []
    x = np.random.default_rng(1).standard_normal((128, 64), dtype=np.float32)
    out = np.zeros_like(x)
    CompiledProgram.from_dir(tmp_path)(x, out)
    np.testing.assert_allclose(out, x + 1.0, rtol=1e-6)
    assert compiled.param_names == ["x", "out"]


def test_from_dir_indexes_orchestrations_by_name(tmp_path):
    from tests.codegen.programs import TwoEntries
    ir.compile(TwoEntries, output_dir=tmp_path)
    cfg = read_kernel_config(tmp_path / "kernel_config.py")
    assert [o["function_name"] for o in cfg["ORCHESTRATIONS"]] == ["double", "triple"]
    assert [o["source"] for o in cfg["ORCHESTRATIONS"]] == ["orchestration/double.sim.py",
                                                             "orchestration/triple.sim.py"]
    assert {p.name for p in (tmp_path / "orchestration").glob("*.sim.py")} == {"double.sim.py", "triple.sim.py"}
    for name, factor in (("double", "2.0"), ("triple", "3.0")):
        text = (tmp_path / "orchestration" / f"{name}.sim.py").read_text()
        assert f"out_1 = _sim_ctx.submit(_sim_task_scale, (x, {factor}, out, ))" in text
        assert "#   _sim_task_scale          scale: AIV; x: In, k: Scalar, out: Out\n" in text
    compiled = CompiledProgram.from_dir(tmp_path)
    assert compiled.entries == ["double", "triple"]
    x = np.random.default_rng(2).standard_normal((32, 32), dtype=np.float32)
    for name, factor in (("double", 2.0), ("triple", 3.0)):
        out = np.zeros_like(x)
        compiled[name](x, out)
        np.testing.assert_allclose(out, factor * x, rtol=1e-6)
    assert CompiledProgram.from_dir(tmp_path, entry="triple").entry == "triple"
    with pytest.raises(KeyError, match="no Orchestration function 'quadruple'"):
        compiled["quadruple"]


def test_a_device_build_lists_the_same_orchestration_code(tmp_path):
    """No simulator runs a device build, but its manifest names the orchestration code, written alone."""
    ir.compile(MixedMatmulRelu, output_dir=tmp_path, platform="a2a3")
    cfg = read_kernel_config(tmp_path / "kernel_config.py")
    assert cfg["ORCHESTRATION"]["source"] == "orchestration/main.sim.py"
    text = (tmp_path / "orchestration" / "main.sim.py").read_text()
    assert "gm_pipe_buffer_0 = _sim_ctx.create_tensor((4096,), _sim_fp32)" in text
    assert "out_0_1 = _sim_ctx.submit(_sim_task_mm, (x, y, out_0, gm_pipe_buffer_0, ))" in text
    assert [p.name for p in (tmp_path / "kernels").iterdir()] == ["README.txt"]    # no device binaries here
