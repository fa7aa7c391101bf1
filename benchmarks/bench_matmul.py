"""Matrix product throughput (issue 5), against torch and cupy in the same run:

- TFLOP/s of `a @ b` (output allocated each call) for float16, bfloat16 and float32 at 1024, 2048,
  4096 and 8192 square, and a decode-shaped product (1 x 2048 @ 2048 x 5632, memory-bound);
- the dense bfloat16 limit of this GPU as torch (cuBLAS) reaches it: its best bfloat16 figure over
  the square sizes and a 16384 square product; gpukit's best bfloat16 figure against it.

cupy has no bfloat16.
"""

import time

import numpy as np

import gpukit as gk

SHAPES = [(n, n, n) for n in (1024, 2048, 4096, 8192)] + [(1, 2048, 5632)]
DTYPES = ("float16", "bfloat16", "float32")


def seconds_per_call(step, sync, budget=0.2):
    """Best of 3 timed runs of `step`, each run about `budget` / 3 seconds, after a warm-up."""
    step()
    sync()
    start = time.perf_counter()
    step()
    sync()
    once = max(time.perf_counter() - start, 1e-6)
    iters = int(min(2000, max(3, budget / 3 / once)))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(iters):
            step()
        sync()
        best = min(best, (time.perf_counter() - start) / iters)
    return best


def tflops(shape, seconds):
    m, k, n = shape
    return 2 * m * k * n / seconds / 1e12


def host_operands(rng, shape):
    m, k, n = shape
    return rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)


def gpukit_tflops(x, y, dtype, shape):
    np_dtype = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    a, b = gk.asarray(x.astype(np_dtype)), gk.asarray(y.astype(np_dtype))
    return tflops(shape, seconds_per_call(lambda: a @ b, gk.synchronize))


def torch_tflops(torch, x, y, dtype, shape):
    t = getattr(torch, dtype)
    a, b = torch.from_numpy(x).cuda().to(t), torch.from_numpy(y).cuda().to(t)
    return tflops(shape, seconds_per_call(lambda: a @ b, torch.cuda.synchronize))


def cupy_tflops(cupy, x, y, dtype, shape):
    if dtype == "bfloat16":
        return None
    a, b = cupy.asarray(x.astype(dtype)), cupy.asarray(y.astype(dtype))
    return tflops(shape, seconds_per_call(lambda: a @ b, cupy.cuda.runtime.deviceSynchronize))


def optional(name):
    try:
        module = __import__(name)
        if name == "torch" and not module.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        return module
    except Exception as e:  # torch and cupy are only there to compare against
        print(f"{name} unavailable: {e}")
        return None


def print_table(backend, rows):
    """rows: (measure, gpukit, torch, cupy) in TFLOP/s, None where there is no figure; adds the
    ratios gpukit / torch and gpukit / cupy."""

    def fmt(v, digits=1):
        return "" if v is None else f"{v:.{digits}f}"

    def ratio(a, b):
        return None if a is None or not b else a / b

    width = max(len(r[0]) for r in rows)
    print(f"\nbackend: {backend}")
    head = ("gpukit", "torch", "cupy", "gk/torch", "gk/cupy")
    print(f"{'measure (TFLOP/s)':{width}s} " + " ".join(f"{h:>9s}" for h in head))
    for name, ours, torch_v, cupy_v in rows:
        cells = [fmt(ours), fmt(torch_v), fmt(cupy_v)]
        cells += [fmt(ratio(ours, torch_v), 2), fmt(ratio(ours, cupy_v), 2)]
        print(f"{name:{width}s} " + " ".join(f"{c:>9s}" for c in cells))


def main():
    print(gk.info())
    if gk.backend() == "cpu":
        print("bench_matmul: no GPU backend, nothing to measure")
        return
    torch, cupy = optional("torch"), optional("cupy")
    rng = np.random.default_rng(0)
    rows, best = [], {"gpukit": None, "torch": None}
    for dtype in DTYPES:
        for shape in SHAPES:
            x, y = host_operands(rng, shape)
            ours = gpukit_tflops(x, y, dtype, shape)
            theirs = torch_tflops(torch, x, y, dtype, shape) if torch else None
            cp = cupy_tflops(cupy, x, y, dtype, shape) if cupy else None
            m, k, n = shape
            label = f"{dtype} {m}x{k} @ {k}x{n}"
            rows.append((label, ours, theirs, cp))
            if dtype == "bfloat16" and m > 1:
                for lib, v in (("gpukit", ours), ("torch", theirs)):
                    if v is not None:
                        best[lib] = max(best[lib] or 0.0, v)
            if cupy:
                cupy.get_default_memory_pool().free_all_blocks()
    if torch:
        shape = (16384, 16384, 16384)
        a = torch.randn(shape[:2], device="cuda", dtype=torch.bfloat16)
        big = tflops(shape, seconds_per_call(lambda: a @ a, torch.cuda.synchronize, budget=0.5))
        del a
        best["torch"] = max(best["torch"] or 0.0, big)
        rows.append(("bfloat16 16384 square (torch only)", None, big, None))
        rows.append(
            ("dense bf16 limit: torch's best bfloat16", best["gpukit"], best["torch"], None)
        )
    print_table(gk.backend(), rows)


if __name__ == "__main__":
    main()
