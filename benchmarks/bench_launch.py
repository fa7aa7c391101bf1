"""Kernel compile and launch overheads (issue 3), against torch and cupy in the same run:

- NVRTC compile of a small kernel (cold), its disk-cache hit, its memory-cache hit;
- the first `a + b` in a new process, with a cold and with a warm disk cache;
- per-op time of a small add (1024 float32 elements, output allocated), and of an empty
  RawKernel launch, from Python.
"""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import per_op_us, print_table

import gpukit as gk
from gpukit import jit


def first_op_in_new_process(cache_dir):
    code = (
        "import time, numpy as np, gpukit as gk;"
        "a = gk.asarray(np.ones(1024, np.float32)); gk.synchronize();"
        "t = time.perf_counter(); c = a + a; gk.synchronize();"
        "print((time.perf_counter() - t) * 1e3)"
    )
    env = {**os.environ, "GPUKIT_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return float(out.stdout.strip())


def main():
    print(gk.info())
    rows = []
    rt = gk._current_runtime()
    if gk.backend() == "cuda":
        with tempfile.TemporaryDirectory() as d:
            os.environ["GPUKIT_CACHE_DIR"] = d
            src = 'extern "C" __global__ void k(float* x, float y) { x[threadIdx.x] += y; }'
            t = time.perf_counter()
            rt.jit.build("small.cu", src)
            cold = (time.perf_counter() - t) * 1e3
            jit.kernel_cache().clear_memory()
            t = time.perf_counter()
            rt.jit.build("small.cu", src)
            disk = (time.perf_counter() - t) * 1e3
            t = time.perf_counter()
            rt.jit.build("small.cu", src)
            memory = (time.perf_counter() - t) * 1e3
            rows += [
                ("NVRTC compile, small kernel (ms)", cold, None, None),
                ("same kernel, disk-cache hit (ms)", disk, None, None),
                ("same kernel, memory-cache hit (ms)", memory, None, None),
            ]
            first_cold = first_op_in_new_process(d + "/fresh")
            first_warm = first_op_in_new_process(d + "/fresh")
            rows += [
                ("first a + b in a new process, cold cache (ms)", first_cold, None, None),
                ("first a + b in a new process, warm cache (ms)", first_warm, None, None),
            ]
            del os.environ["GPUKIT_CACHE_DIR"]

    x = np.random.default_rng().standard_normal(1024).astype(np.float32)
    a, b = gk.asarray(x), gk.asarray(x[::-1].copy())
    ours = per_op_us(lambda: a + b, gk.synchronize)
    torch_us = cupy_us = None
    try:
        import torch

        ta, tb = torch.from_numpy(x).cuda(), torch.from_numpy(x).cuda()
        torch_us = per_op_us(lambda: ta + tb, torch.cuda.synchronize)
    except Exception as e:  # torch is only there to compare against
        print("torch unavailable:", e)
    try:
        import cupy

        ca, cb = cupy.asarray(x), cupy.asarray(x)
        cupy_us = per_op_us(lambda: ca + cb, cupy.cuda.runtime.deviceSynchronize)
    except Exception as e:
        print("cupy unavailable:", e)
    rows.append(
        ("small add, 1024 float32, per op incl. output alloc (us)", ours, torch_us, cupy_us)
    )
    if gk.backend() == "cuda":
        # Where the per-op time goes: the launch entry point alone, and the pool alone.
        out = a + b
        plan_fn = rt.function(
            *gk._kernels.elementwise("add", a.dtype, a.dtype, (a.dtype, b.dtype)), "gk_ew_contig"
        )
        launch = rt.device.elementwise_contig
        stream = rt.stream
        pa, pb, po = rt.addresses((a, b, out), stream)
        rows.append(
            (
                "  of which: C++ entry + cuLaunchKernel (us)",
                per_op_us(
                    lambda: launch(plan_fn, stream, 1024, po, pa, pb, None, None), gk.synchronize
                ),
                None,
                None,
            )
        )
        allocate = rt.pool.allocate
        rows.append(
            (
                "  of which: pool allocate + free, 4 KiB (us)",
                per_op_us(lambda: allocate(4096, stream)),
                None,
                None,
            )
        )
        empty = gk.RawKernel('extern "C" __global__ void e() {}', "e")
        rows.append(
            (
                "empty RawKernel launch from Python (us)",
                per_op_us(lambda: empty((1,), (1,), ()), gk.synchronize),
                None,
                None,
            )
        )

    print_table(gk.backend(), rows)


if __name__ == "__main__":
    main()
