"""Issue 12 probe: where the small add's time goes on the GPU machine (us per call)."""

import time

import numpy as np

import gpukit as gk
from gpukit import _core
from gpukit.array import layout
from gpukit.elementwise import _ENTRIES
from gpukit.runtime import devices
from gpukit.runtime.ops import ELEMENTWISE
from gpukit.runtime.quota import local as quota

rt = devices.runtime()
x = np.random.default_rng(0).standard_normal(1024).astype(np.float32)
a, b, c = gk.asarray(x), gk.asarray(x[::-1].copy()), gk.asarray(x)
s = rt.stream


def timed(step, n=20000, sync=True):
    for _ in range(300):
        step()
    gk.synchronize()
    best_wall = best_enq = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        t1 = time.perf_counter()
        gk.synchronize()
        t2 = time.perf_counter()
        best_enq = min(best_enq, (t1 - t0) / n * 1e6)
        best_wall = min(best_wall, (t2 - t0) / n * 1e6)
    return best_wall, best_enq


def gpu_us(step, n=2000):
    e0, e1 = gk.Event(), gk.Event()
    e0.record()
    for _ in range(n):
        step()
    e1.record()
    gk.synchronize()
    return e0.elapsed_ms(e1) * 1e3 / n


a + b
entry = _ENTRIES[next(k for k in _ENTRIES if k[0] == "add")]
plan = entry[0]
into = rt.plan_elementwise(
    ELEMENTWISE["add"], np.dtype(np.float32), (layout(a), layout(b)), layout(c), False
)
rows = {
    "a + b": lambda: a + b,
    "add plan (allocates)": lambda: plan(s, quota.quota, a._buf, a._offset, b._buf, b._offset),
    "add plan into c": lambda: into(
        s, quota.quota, a._buf, a._offset, b._buf, b._offset, c._buf, c._offset
    ),
    "gk.add(a, b, out=c)": lambda: gk.add(a, b, out=c),
}
if rt.capabilities.compiles_kernels:
    fn = rt.compile_function("e.cu", 'extern "C" __global__ void e() {}', (), "e")
    empty = _core.Plan(rt.pool, rt.launch_table, "", [(fn, (1, 1, 1), (1, 1, 1), 0, b"", [])])
    rows["empty kernel plan"] = lambda: empty(s, None)
print(f"{'row':28s} {'wall':>8s} {'enqueue':>8s} {'gpu/op':>8s}")
for name, f in rows.items():
    w, e = timed(f)
    print(f"{name:28s} {w:8.3f} {e:8.3f} {gpu_us(f):8.3f}")
