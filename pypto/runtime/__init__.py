"""pypto.runtime: RunConfig, run(), CompiledProgram, and the simulator platforms.

    from pypto.runtime import RunConfig, run
    compiled = run(Prog, a, b, out, config=RunConfig(platform="a2a3sim"))
    with ChipWorker(config=RunConfig()) as worker: ...      # resident DeviceTensors, reusable handles
    benchmark(compiled, [a, b, out], rounds=10, warmup=2)      # BenchmarkStats, per span
    with compiled.prepare() as rt: rt(a, b, out)             # a worker with the program registered
    TensorSpec("x", [64, 64], torch.float32, init_value=torch.randn).create_tensor()
"""

from pypto.runtime.benchmark import BenchmarkResult, BenchmarkStats, benchmark
from pypto.runtime.compiled_program import CompiledProgram
from pypto.runtime.config import RunConfig
from pypto.runtime.distributed import DistributedCompiledProgram, DistributedConfig
from pypto.runtime.distributed_worker import DistributedWorker, StackedDeviceTensor
from pypto.runtime.runner import run
from pypto.runtime.tensor_spec import TensorSpec
from pypto.runtime.worker import ChipWorker, DeviceTensor, PreparedProgram, RegistrationHandle

__all__ = ["RunConfig", "run", "CompiledProgram", "ChipWorker", "DeviceTensor", "benchmark", "BenchmarkResult",
           "BenchmarkStats", "DistributedConfig", "DistributedCompiledProgram", "DistributedWorker", "TensorSpec",
           "RegistrationHandle", "PreparedProgram"]
