"""The exact float32 product 4096^3 on this checkout's gemm_f32.cu, on it as one instance for
split and unsplit launches (before GK_F32_SPLIT), and on the kernel files given (e.g. f414c6f's,
the last commit timed at 44 TFLOP/s: its argument struct is renamed to today's, whose fields it
reads are unchanged), in one process beside torch: the same bits from all, then event timings
in alternating rounds (bench_matmul's event timing: the median of 5 runs).

    PYTHONPATH=/tmp/gpukit-site python3 notes/f32_ab.py [gemm_f32.cu of another commit ...]
"""

import importlib
import sys
from pathlib import Path

import numpy as np

import gpukit as gk
from gpukit.runtime import jit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_matmul import gk_ms, torch_ms

BASE = dict(jit.builtin_sources())
MAIN = BASE["gemm_f32.cu"]
SPLIT = "constexpr bool partial = GK_F32_SPLIT;"
assert SPLIT in MAIN
# main, and main as it was before GK_F32_SPLIT (one instance for split and unsplit launches)
VARIANTS = {"main": MAIN, "one instance": MAIN.replace(SPLIT, "const bool partial = p.splits > 1;")}
for path in sys.argv[1:]:  # other versions of gemm_f32.cu, e.g. `git show f414c6f:kernels/...`
    VARIANTS[path] = Path(path).read_text().replace("gk_gemm_f32_args", "gk_gemm_args")


def use(name):
    gk.synchronize()
    jit._SOURCES = {**BASE, "gemm_f32.cu": VARIANTS[name]}
    rt = gk.asarray([0.0])._rt
    rt._functions.clear()
    rt._modules.clear()
    importlib.import_module("gpukit.array")._PLANS.clear()


def main():
    rng = np.random.default_rng(7)
    n = 4096
    A = gk.asarray(rng.standard_normal((n, n)).astype(np.float32))
    B = gk.asarray(rng.standard_normal((n, n)).astype(np.float32))
    bits = {}
    for name in VARIANTS:
        use(name)
        bits[name] = (A @ B).get()
    for name in VARIANTS:
        print(f"{name}: same bits as main {np.array_equal(bits['main'], bits[name])}", flush=True)
    ref = A.get().astype(np.float64) @ B.get().astype(np.float64)
    print(
        "max error / max |ref|, main:", float(np.abs(bits["main"] - ref).max() / np.abs(ref).max())
    )
    best = {name: [] for name in VARIANTS}
    for _ in range(3):
        for name in VARIANTS:
            use(name)
            best[name].append(gk_ms(lambda: A @ B))
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        ta, tb = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        best["torch"] = [torch_ms(torch, lambda: ta @ tb)]
    except ImportError:
        pass
    for name, ms in best.items():
        print(f"{name:10s} ms {' '.join(f'{t:.3f}' for t in ms)}  best "
              f"{2 * n**3 / min(ms) / 1e9:.1f} TFLOP/s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
