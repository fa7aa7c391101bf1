"""The float64 tensor-core GEMM (kernels/gemm_f64.cu) on the GPU machine beside torch (cuBLAS
DGEMM) in one process: every operand layout at 4096^3, the shapes the blocked factorizations
run, each checked against torch first. Run from notes/ after scripts/gpu_machine.sh installed
gpukit: PYTHONPATH=/tmp/gpukit-site python3 f64_probe.py. F64_MMA_K=4|8|16 builds the kernel
with that MMA shape instead of the architecture's default (GK_F64_MMA_K)."""

import os

import numpy as np
import torch
from probe_timing import best_ms

import gpukit as gk
from gpukit.runtime import kernels

if os.environ.get("F64_MMA_K"):
    _built = kernels.gemm_f64

    def _with_shape(*args):
        file, defines = _built(*args)
        return file, (*defines, f"GK_F64_MMA_K={os.environ['F64_MMA_K']}")

    kernels.gemm_f64 = _with_shape
    print("GK_F64_MMA_K =", os.environ["F64_MMA_K"])

rng = np.random.default_rng(0)


def operand(rows, cols, transposed):
    if transposed:
        h = rng.standard_normal((cols, rows))
        return gk.asarray(h).T, torch.from_numpy(h).cuda().T
    h = rng.standard_normal((rows, cols))
    return gk.asarray(h), torch.from_numpy(h).cuda()


def tsync():
    torch.cuda.synchronize()


cases = [(4096, 4096, 4096, ta, tb) for ta in (False, True) for tb in (False, True)]
if os.environ.get("F64_MMA_K"):
    cases = [*cases[:1], (4032, 64, 4032, False, True), (1000, 1000, 1000, False, False)]
else:
    cases += [(8192, 8192, 8192, False, False), (4032, 64, 4032, False, True),
              (4032, 64, 64, False, False), (2048, 2048, 64, False, False),
              (1000, 1000, 1000, False, False), (4095, 4097, 1001, True, False)]  # fmt: skip
print(f"{'m x k x n (a.T, b.T)':32s} {'gpukit ms':>10s} {'TFLOP/s':>8s} {'torch ms':>9s} "
      f"{'TFLOP/s':>8s} {'x torch':>8s}  path, rel err")  # fmt: skip
for m, k, n, ta, tb in cases:
    a, xa = operand(m, k, ta)
    b, xb = operand(k, n, tb)
    ref = (xa @ xb).cpu().numpy()
    got = (a @ b).to_numpy()
    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    reps = max(2, int(2e10 / (2 * m * n * k)))
    ours = best_ms(lambda a=a, b=b: a @ b, reps)
    theirs = best_ms(lambda xa=xa, xb=xb: xa @ xb, reps, tsync)
    tf = 2 * m * n * k / 1e9
    print(f"{m} x {k} x {n} ({int(ta)}, {int(tb)}){'':12s} {ours:10.3f} {tf / ours:8.1f} "
          f"{theirs:9.3f} {tf / theirs:8.1f} {theirs / ours:8.2f}  "
          f"{gk.linalg.matmul_path(a, b)}, {err:.1e}", flush=True)  # fmt: skip
