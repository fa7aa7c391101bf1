"""Device probe for issue 17's K-slice yield (never part of gpukit; run beside an installed
gpukit): the cost of the preemptible sm_90a GEMM never raised against the plain one (8192^3 and
4096 x 6144 x 8192 bf16, device events, median of 15), and the preemption latency (word raised ->
launch gone) of the preemptible 8192^3 product by where in the product the word is raised.
Prints one table."""

import random
import time

import numpy as np

import gpukit as gk
from gpukit.array import layout
from gpukit.runtime import runtime
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda.preempt import control_words

rt = runtime()
least, greatest = gk.Stream.priority_range()
low, high = gk.Stream(least), gk.Stream(greatest)
rng = np.random.default_rng(0)


def timed(fn, reps=15):
    ms = []
    for _ in range(reps):
        start, end = gk.Event(), gk.Event()
        start.record(low)
        fn()
        end.record(low)
        end.synchronize()
        ms.append(start.elapsed_ms(end))
    return float(np.median(ms))


def probe(m, n, k):
    a = gk.asarray(rng.standard_normal((m, k)).astype(np.float32)).astype("bfloat16")
    b = gk.asarray(rng.standard_normal((k, n)).astype(np.float32)).astype("bfloat16")
    out = Layout(a.dtype, (m, n), (n * 2, 2))
    plan = rt.plan_preemptible_matmul(layout(a), layout(b), out, None)
    result = gk.empty((m, n), a.dtype)
    save = gk.empty((plan.save_bytes // 4,), "float32")
    words = control_words(plan.grid)
    ctls = [gk.asarray(words) for _ in range(20)]

    def plain():
        with low:
            gk.matmul(a, b)

    it = iter(ctls)

    def preemptible():
        ctl = next(it)
        plan.yielding(low.handle, None, a._buf, a._offset, b._buf, b._offset, result._buf,
                      result._offset, ctl._buf, ctl._offset, save._buf, save._offset)  # fmt: skip

    plain(), gk.synchronize()
    t_plain = timed(plain)
    preemptible(), gk.synchronize()
    t_pre = timed(preemptible)
    tf = 2 * m * n * k / 1e9
    print(
        f"{m}x{n}x{k}: plain {t_plain:.3f} ms ({tf / t_plain:.0f} TFLOP/s), preemptible never "
        f"raised {t_pre:.3f} ms ({tf / t_pre:.0f} TFLOP/s, {t_pre / t_plain - 1:+.1%}); "
        f"grid {plan.grid}, tiles {plan.tiles}, save {plan.save_bytes / 2**20:.1f} MiB"
    )
    if m != 8192:
        return
    r = random.Random(1)
    by_point = {}
    for _ in range(120):
        ctl = gk.asarray(words)
        gk.synchronize()
        args = (a._buf, a._offset, b._buf, b._offset, result._buf, result._offset,
                ctl._buf, ctl._offset, save._buf, save._offset)  # fmt: skip
        raised, gone = gk.Event(), gk.Event()
        plan.yielding(low.handle, None, *args)
        gone.record(low)
        point = r.uniform(0.05, 0.9)
        spin = time.perf_counter() + point * t_plain * 1e-3
        while time.perf_counter() < spin:
            pass
        raised.record(high)
        rt.raise_preemption(high.handle, 0)
        high.wait_event(gone)
        rt.lower_preemption(high.handle, 0)
        low.synchronize(), high.synchronize()
        waiting = int(ctl.to_numpy()[1])
        plan.finishing(low.handle, None, *args)
        low.synchronize()
        us = raised.elapsed_ms(gone) * 1e3
        if us > 0:
            by_point.setdefault(int(point * 3), []).append((us, waiting))
    for third, xs in sorted(by_point.items()):
        us = np.array([x[0] for x in xs])
        saved = np.mean([x[1] for x in xs])
        q = np.percentile(us, [0, 50, 90, 100])
        print(
            f"  raised in third {third} of the product: {len(xs)} samples, latency us min "
            f"{q[0]:.1f} p50 {q[1]:.1f} p90 {q[2]:.1f} max {q[3]:.1f}; tiles saved {saved:.0f}"
        )


for shape in ((8192, 8192, 8192), (4096, 6144, 8192)):
    probe(*shape)
