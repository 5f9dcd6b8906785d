"""The numerics of the graph solvers under each BLAS kernel numpy's OpenBLAS picks on x86.

OpenBLAS chooses its kernel by CPU (DYNAMIC_ARCH); the kernels round differently, and a singular
solve that let the rounding drift into its null space passed on a Haswell kernel and failed on a
SkylakeX one (AVX-512). Each kernel here runs the singular-system tests and the agreement tests
with GraphLearning in a subprocess of its own (the kernel is chosen when numpy loads), so a
machine of either kind cannot go red alone.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent
# the tests whose numbers a kernel's rounding can move: the singular systems (Poisson's block CG,
# with and without the null space), the solvers' closed forms, and GraphLearning's labels
SUITES = ["test_optim_graph_learning.py", "test_graph_learning.py",
          "test_graphlearning_agreement.py"]
# the CPU flag each kernel needs: a kernel the CPU cannot run is not a kernel it would pick
KERNELS = {"Haswell": "avx2", "SkylakeX": "avx512f"}


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags")
            for flag in line.split(":", 1)[1].split()}


def _env(kernel: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["OPENBLAS_CORETYPE"] = kernel
    env.pop("OPENBLAS_L2_SIZE", None)  # a size set for another kernel would mislead this one
    return env


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_graph_solvers_agree_under_each_blas_kernel(kernel):
    if KERNELS[kernel] not in _cpu_flags():
        pytest.skip(f"this CPU has no {KERNELS[kernel]}: OpenBLAS cannot run its {kernel} kernel")
    probe = ("import json, numpy, threadpoolctl; print(json.dumps([i.get('architecture') for i in "
             "threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas']))")
    archs = json.loads(subprocess.run([sys.executable, "-c", probe], env=_env(kernel), check=True,
                                      capture_output=True, text=True).stdout)
    assert archs and all(a.lower() == kernel.lower() for a in archs), archs  # the kernel is in use
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "-o", "addopts=", *SUITES],
                         cwd=TESTS, env=_env(kernel), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"under OPENBLAS_CORETYPE={kernel}:\n{run.stdout[-6000:]}{run.stderr[-2000:]}"
