"""Issue 12 probe: gpukit's per-call paths in bursts of 200 (under the driver's queue: host time)
and in runs of 20000 (host or GPU, whichever is slower)."""

import time

import numpy as np

import gpukit as gk
from gpukit import _core
from gpukit.runtime import devices

rt = devices.runtime()
rng = np.random.default_rng(0)
x = rng.standard_normal(1024).astype(np.float32)
a, b, c = gk.asarray(x), gk.asarray(x[::-1].copy()), gk.asarray(x)
row = gk.asarray(rng.standard_normal((1, 2048)), dtype=gk.bfloat16)
w = gk.asarray(rng.standard_normal(2048), dtype=gk.bfloat16)
row32 = gk.asarray(rng.standard_normal((1, 2048)).astype(np.float32))
m = gk.asarray(rng.standard_normal((64, 64)).astype(np.float32))
s = rt.stream
fn = rt.compile_function("e.cu", 'extern "C" __global__ void e() {}', (), "e")
empty = _core.Plan(rt.pool, rt.launch_table, "", [(fn, (1, 1, 1), (1, 1, 1), 0, b"", [])])
nolaunch = _core.Plan(rt.pool, None, "aa", [], [4096])


def timed(f):
    for _ in range(2000):
        f()
    gk.synchronize()
    burst = run = float("inf")
    for _ in range(30):
        t0 = time.perf_counter()
        for _ in range(200):
            f()
        t1 = time.perf_counter()
        gk.synchronize()
        burst = min(burst, (t1 - t0) / 200 * 1e6)
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(20000):
            f()
        gk.synchronize()
        run = min(run, (time.perf_counter() - t0) / 20000 * 1e6)
    return burst, run


rows = {
    "empty kernel plan": lambda: empty(s, None),
    "plan allocating, no launch": lambda: nolaunch(s, None, a._buf, a._offset, b._buf, b._offset),
    "a + b": lambda: a + b,
    "a += b": lambda: a.__iadd__(b),
    "rms_norm 1x2048 bf16": lambda: gk.nn.rms_norm(row, w),
    "softmax 1x2048 f32": lambda: gk.nn.softmax(row32),
    "64x64 matmul": lambda: m @ m,
    "view a[1:-1:2]": lambda: a[1:-1:2],
}
print(f"{'gpukit path':42s} {'burst200':>10s} {'run20000':>10s}")
for name, f in rows.items():
    bu, ru = timed(f)
    print(f"{name:42s} {bu:10.3f} {ru:10.3f}")
try:
    import torch

    tx, ty = torch.randn(1024, device="cuda"), torch.randn(1024, device="cuda")
    for name, f in {"torch x + y": lambda: tx + ty}.items():
        bu, ru = timed(f)
        print(f"{name:42s} {bu:10.3f} {ru:10.3f}")
except Exception as e:
    print("torch:", e)
