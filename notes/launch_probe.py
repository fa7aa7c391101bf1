"""Issue 12 probe: where the small ops' time goes on the GPU machine (us per call). Columns:
"burst" (best of 30 bursts of 200 calls, timed before the synchronize: under the driver's queue,
so host time alone), "wall" and "enqueue" (best of 5 runs of 20000 calls then one synchronize;
the loop before the synchronize is "enqueue": host or GPU, whichever is slower) and "gpu/op"
(gpukit's events around 2000 calls; not for torch's row, whose work is on torch's stream)."""

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
rng = np.random.default_rng(0)
x = rng.standard_normal(1024).astype(np.float32)
a, b, c = gk.asarray(x), gk.asarray(x[::-1].copy()), gk.asarray(x)
row = gk.asarray(rng.standard_normal((1, 2048)), dtype=gk.bfloat16)
w = gk.asarray(rng.standard_normal(2048), dtype=gk.bfloat16)
row32 = gk.asarray(rng.standard_normal((1, 2048)).astype(np.float32))
m = gk.asarray(rng.standard_normal((64, 64)).astype(np.float32))
s = rt.stream


def burst(step, sync):
    best = float("inf")
    for _ in range(30):
        t0 = time.perf_counter()
        for _ in range(200):
            step()
        t1 = time.perf_counter()
        sync()
        best = min(best, (t1 - t0) / 200 * 1e6)
    return best


def timed(step, sync, n=20000):
    for _ in range(300):
        step()
    sync()
    best_wall = best_enq = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        t1 = time.perf_counter()
        sync()
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
nolaunch = _core.Plan(rt.pool, None, "aa", [], [4096])
rows = {
    "a + b": lambda: a + b,
    "a += b": lambda: a.__iadd__(b),
    "add plan (allocates)": lambda: plan(s, quota.quota, a._buf, a._offset, b._buf, b._offset),
    "add plan into c": lambda: into(
        s, quota.quota, a._buf, a._offset, b._buf, b._offset, c._buf, c._offset
    ),
    "plan allocating, no launch": lambda: nolaunch(s, None, a._buf, a._offset, b._buf, b._offset),
    "gk.add(a, b, out=c)": lambda: gk.add(a, b, out=c),
    "rms_norm 1x2048 bf16": lambda: gk.nn.rms_norm(row, w),
    "softmax 1x2048 f32": lambda: gk.nn.softmax(row32),
    "64x64 matmul": lambda: m @ m,
    "view a[1:-1:2]": lambda: a[1:-1:2],
}
if rt.capabilities.compiles_kernels:
    fn = rt.compile_function("e.cu", 'extern "C" __global__ void e() {}', (), "e")
    empty = _core.Plan(rt.pool, rt.launch_table, "", [(fn, (1, 1, 1), (1, 1, 1), 0, b"", [])])
    rows["empty kernel plan"] = lambda: empty(s, None)
try:
    import torch

    tx, ty = torch.randn(1024, device="cuda"), torch.randn(1024, device="cuda")
    peer = {"torch x + y": lambda: tx + ty}
    peer_sync = torch.cuda.synchronize
except Exception as e:  # torch is only there to compare against
    print("torch:", e)
    peer, peer_sync = {}, None
print(f"{'row':28s} {'burst':>8s} {'wall':>8s} {'enqueue':>8s} {'gpu/op':>8s}")
for name, f in rows.items():
    wall, enq = timed(f, gk.synchronize)
    print(f"{name:28s} {burst(f, gk.synchronize):8.3f} {wall:8.3f} {enq:8.3f} {gpu_us(f):8.3f}")
for name, f in peer.items():
    wall, enq = timed(f, peer_sync)
    print(f"{name:28s} {burst(f, peer_sync):8.3f} {wall:8.3f} {enq:8.3f}")
