"""Per-call overheads of small ops (issue 12), against torch and cupy in the same run: each op is
one plan call (gpukit._core.Plan on CUDA), so what is left above the launch itself is Python's
share (the dunder, the plan key, one dictionary hit, wrapping the result) and the Rust one (an
allocation, the operands' addresses, patching the argument bytes).

Rows: small add (1024 float32, output allocated), the same in place (a += b), rms_norm 1x2048
bf16, softmax 1x2048 f32, the view a[1:-1:2], a repeated 64x64 float32 matmul, alloc+free of 1 MiB
with 8 threads at once, and three floors: a plan of one empty kernel (Rust and the driver's launch
alone), the same kernel launched from a C++ loop (the driver alone: the host's limit under every
row) and the same `a + b` with a plan that allocates its output but launches nothing (Python and
the pool alone).
Targets (issue 12): add <= 4.0 us, rms_norm/softmax <= 4.5, view <= 1.0, matmul <= 4.5,
alloc+free <= 1.0. Prints a table and writes bench_launch.json (to $OUT when set).
"""

import importlib
import threading
import time

import numpy as np
from _common import per_op_us, print_table, write_json

import gpukit as gk
from gpukit import _core
from gpukit.base.shapes import contiguous_strides
from gpukit.runtime import devices

THREADS, ALLOCS = 8, 20000


def _try(label, make):
    """make() -> per-call microseconds, or None with the reason printed (torch, cupy)."""
    try:
        return make()
    except Exception as e:  # the peers are only there to compare against
        print(f"{label} unavailable: {type(e).__name__}: {e}")
        return None


def threaded_alloc_us(alloc_free) -> tuple[float, float]:
    """(wall time per alloc+free over all threads, per call as each thread sees it)."""
    barrier = threading.Barrier(THREADS + 1)

    def work():
        barrier.wait()
        for _ in range(ALLOCS):
            alloc_free()

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    barrier.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return wall / (THREADS * ALLOCS) * 1e6, wall / ALLOCS * 1e6


def gpukit_rows(rt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1024).astype(np.float32)
    a, b = gk.asarray(x), gk.asarray(x[::-1].copy())
    row = gk.asarray(rng.standard_normal((1, 2048)), dtype=gk.bfloat16)
    weight = gk.asarray(rng.standard_normal(2048), dtype=gk.bfloat16)
    row32 = gk.asarray(rng.standard_normal((1, 2048)).astype(np.float32))
    m = gk.asarray(rng.standard_normal((64, 64)).astype(np.float32))
    sync = gk.synchronize
    out = {
        "add": per_op_us(lambda: a + b, sync),
        "iadd": per_op_us(lambda: a.__iadd__(b), sync),
        "rms_norm": per_op_us(lambda: gk.nn.rms_norm(row, weight), sync),
        "softmax": per_op_us(lambda: gk.nn.softmax(row32), sync),
        "view": per_op_us(lambda: a[1:-1:2], sync),
        "matmul": per_op_us(lambda: m @ m, sync),
    }
    stream, pool = rt.stream, rt.pool
    out["alloc"] = threaded_alloc_us(lambda: pool.allocate(1 << 20, stream))
    # Floors: a plan that launches nothing (the Python and pool share of `a + b`).
    nbytes = 1024 * 4
    empty_plan = _core.Plan(pool, None, "aa", [], [nbytes])
    strides = contiguous_strides((1024,), 4)
    wrap, dtype = importlib.import_module("gpukit.array").wrap, a.dtype  # gk.array: the function

    def python_and_pool():  # what a + b does around its plan call, with a plan that only allocates
        buf = empty_plan(rt.stream, None, a._buf, a._offset, b._buf, b._offset)
        return wrap(buf, (1024,), dtype, strides, rt)

    out["python_share"] = per_op_us(python_and_pool, sync)
    out["plan_only"] = per_op_us(
        lambda: empty_plan(stream, None, a._buf, a._offset, b._buf, b._offset), sync
    )
    if rt.capabilities.compiles_kernels:
        fn = rt.compile_function("e.cu", 'extern "C" __global__ void e() {}', (), "e")
        launch_plan = _core.Plan(
            pool, rt.launch_table, "", [(fn, (1, 1, 1), (1, 1, 1), 0, b"", [])]
        )
        out["launch_floor"] = per_op_us(lambda: launch_plan(stream, None), sync)
        if rt.kind == "cuda":  # the same kernel launched from C++: the driver's own share
            out["driver_floor"] = min(rt.device.bare_launch_us(fn, stream, 20000) for _ in range(5))
    return out


def torch_rows():
    import torch

    dev = "cuda"
    x = torch.randn(1024, device=dev)
    y = torch.randn(1024, device=dev)
    row = torch.randn(1, 2048, device=dev, dtype=torch.bfloat16)
    weight = torch.randn(2048, device=dev, dtype=torch.bfloat16)
    row32 = torch.randn(1, 2048, device=dev)
    m = torch.randn(64, 64, device=dev)
    sync = torch.cuda.synchronize
    f = torch.nn.functional
    out = {
        "add": per_op_us(lambda: x + y, sync),
        "iadd": per_op_us(lambda: x.add_(y), sync),
        "rms_norm": per_op_us(lambda: f.rms_norm(row, (2048,), weight, 1e-6), sync),
        "softmax": per_op_us(lambda: torch.softmax(row32, -1), sync),
        "view": per_op_us(lambda: x[1:-1:2], sync),
        "matmul": per_op_us(lambda: m @ m, sync),
    }
    out["alloc"] = threaded_alloc_us(lambda: torch.empty(1 << 18, device=dev))
    return out


def cupy_rows():
    import cupy

    x = cupy.random.standard_normal(1024, dtype=cupy.float32)
    y = cupy.random.standard_normal(1024, dtype=cupy.float32)
    m = cupy.random.standard_normal((64, 64), dtype=cupy.float32)
    sync = cupy.cuda.runtime.deviceSynchronize
    out = {
        "add": per_op_us(lambda: x + y, sync),
        "iadd": per_op_us(lambda: x.__iadd__(y), sync),
        "view": per_op_us(lambda: x[1:-1:2], sync),
        "matmul": per_op_us(lambda: m @ m, sync),
    }
    out["alloc"] = threaded_alloc_us(lambda: cupy.empty(1 << 18, dtype=cupy.float32))
    return out


LABELS = [
    ("add", "small add, 1024 float32, per call incl. output (us)"),
    ("iadd", "in-place add a += b, 1024 float32 (us)"),
    ("rms_norm", "rms_norm 1x2048 bf16, per call (us)"),
    ("softmax", "softmax 1x2048 float32, per call (us)"),
    ("view", "view a[1:-1:2] (us)"),
    ("matmul", "64x64 float32 matmul, repeated, per call (us)"),
    ("alloc", "alloc+free 1 MiB, 8 threads: wall per op (us)"),
    ("alloc_thread", "  same, per op as each thread sees it (us)"),
    ("python_share", "floor: a + b with a plan that launches nothing (us)"),
    ("plan_only", "  of which: that plan call alone (Rust + pool) (us)"),
    ("launch_floor", "floor: a plan of one empty kernel (us)"),
    ("driver_floor", "floor: that kernel launched from a C++ loop, the driver alone (us)"),
]


def main():
    print(gk.info())
    rt = devices.runtime()
    ours = gpukit_rows(rt)
    peers = {}
    if rt.kind == "cuda":
        peers["torch"] = _try("torch", torch_rows)
        peers["cupy"] = _try("cupy", cupy_rows)
    results = {"backend": rt.name, "device": rt.describe(), "gpukit": ours, **peers}
    for d in (ours, *(p for p in peers.values() if p)):
        if isinstance(d.get("alloc"), tuple):
            d["alloc"], d["alloc_thread"] = d["alloc"]
    rows = []
    for key, label in LABELS:
        peer = [((peers.get(n) or {}).get(key)) for n in ("torch", "cupy")]
        if key in ours or any(v is not None for v in peer):
            rows.append((label, ours.get(key), *peer))
    print_table(rt.name, rows)
    write_json("bench_launch", results)


if __name__ == "__main__":
    main()
