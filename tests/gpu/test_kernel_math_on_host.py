"""The kernels' elementwise math run on the CPU: each op's functor (its C expression in the op
table, over the helpers of kernels/compat.cuh and kernels/complex.cuh, with the kernels' own
conversions gk_cast) compiled by the host's C++ compiler in HIP mode (plain C++ builtins, no GPU
intrinsics), and checked against NumPy case by case as the parity tests check the GPU
(tests/elementwise_cases.py). This checks the logic of every functor (branches, special values,
signed zeros, conversions, integer wrap-around) wherever the suite runs; the parity tests check
the GPU's own math library on the GPU machine."""

import ctypes
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from elementwise_cases import assert_elementwise, cases, expected, operand_dtypes, operands
from elementwise_cases import result_dtypes as _result_dtypes

from gpukit.runtime import jit, kernels
from gpukit.runtime.ops import ELEMENTWISE

CASES = cases()
_CHUNK = 120  # instances per translation unit

# What run-time compilers provide and the host lacks: attributes and rsqrt.
_PRELUDE = r"""
#include <math.h>
#define __device__
#define __global__
#define __HIPCC_RTC__ 1
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
#include "compat.cuh"
"""


def _instance(i: int, name: str, types) -> str:
    op = ELEMENTWISE[name]
    loop, out = _result_dtypes(name, types)
    params = ", ".join(f"T {v}" for v in "ab"[: op.arity])
    reads = ", ".join(
        f"gk_cast<comp_t>(((const {kernels.C_TYPES[t]}*)in[{k}])[i])" for k, t in enumerate(types)
    )
    out_t = kernels.C_TYPES[out]
    return f"""
namespace k{i} {{
#define GK_LOOP_T {kernels.C_TYPES[loop]}
struct gk_op {{
    template <typename T>
    auto operator()({params}) const {{ return {op.expr}; }}
}};
#undef GK_LOOP_T
}}
extern "C" void k{i}_run(const void* const* in, void* out, long n) {{
    typedef {kernels.arith_type(loop)} comp_t;
    for (long i = 0; i < n; ++i) (({out_t}*)out)[i] = gk_cast<{out_t}>(k{i}::gk_op()({reads}));
}}
"""


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    compiler = shutil.which(os.environ.get("CXX", "g++"))
    if compiler is None:
        pytest.skip("no host C++ compiler (g++ or $CXX)")
    folder = tmp_path_factory.mktemp("host_kernels")
    for header, text in jit.builtin_sources().items():
        if header.endswith(".cuh"):
            (folder / header).write_text(text)
    instances = [_instance(i, n, operand_dtypes(n, d)) for i, (n, d) in enumerate(CASES)]
    chunks = [instances[i : i + _CHUNK] for i in range(0, len(instances), _CHUNK)]

    def build(j):
        (folder / f"chunk{j}.cpp").write_text(_PRELUDE + "".join(chunks[j]))
        command = [compiler, "-std=c++17", "-O1", "-fPIC", "-shared", "-ffp-contract=off"]
        command += ["-I", str(folder), f"chunk{j}.cpp", "-o", f"chunk{j}.so", "-lm"]
        r = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-4000:]
        return ctypes.CDLL(str(folder / f"chunk{j}.so"))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        libraries = list(pool.map(build, range(len(chunks))))
    return [getattr(libraries[i // _CHUNK], f"k{i}_run") for i in range(len(CASES))]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{n}-{d}" for n, d in CASES])
def test_functor_matches_numpy(host_kernels, rng, index):
    name, dtype = CASES[index]
    types = operand_dtypes(name, dtype)
    loop, out_dtype = _result_dtypes(name, types)
    xs = operands(rng, name, types, (997,))
    got = np.empty(997, out_dtype)
    pointers = (ctypes.c_void_p * len(xs))(*(x.ctypes.data for x in xs))
    host_kernels[index](pointers, ctypes.c_void_p(got.ctypes.data), ctypes.c_long(got.size))
    assert_elementwise(got, expected(name, xs, types), name, loop)
