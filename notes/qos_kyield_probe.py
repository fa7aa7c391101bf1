"""Device probe for issue 17's K-slice yield (never part of gpukit; run beside an installed
gpukit, from the repository root or with benchmarks/ beside notes/): per check interval (K slices
between two checks of the preemption words; the launch's preempt_every), the cost of the
preemptible sm_90a GEMM never raised against the plain one (8192^3 and 4096 x 6144 x 8192 bf16,
device events, the two timed alternately, median of 31), and the preemption latency of the
preemptible 8192^3 product raised at random points, stamped on the device (%globaltimer: the
raise by a one-thread kernel that stamps and writes the word, the blocks' checks and exits by the
GEMM itself; benchmarks/bench_sched.py's measure). Prints one table per interval."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import bench_sched

import gpukit as gk
from gpukit.array import layout
from gpukit.runtime import runtime
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda.preempt import control_words

EVERIES = [int(x) for x in os.environ.get("PROBE_EVERY", "1,2,4").split(",")]
SAMPLES = int(os.environ.get("PROBE_SAMPLES", 150))
rt = runtime()
least, greatest = gk.Stream.priority_range()
low = gk.Stream(least)
rng = np.random.default_rng(0)


def timed_pair(fns, reps=31):
    """Median device ms of each of `fns`, timed alternately."""
    ms = [[] for _ in fns]
    for _ in range(reps):
        for i, fn in enumerate(fns):
            start, end = gk.Event(), gk.Event()
            start.record(low)
            fn()
            end.record(low)
            end.synchronize()
            ms[i].append(start.elapsed_ms(end))
    return [float(np.median(m)) for m in ms]


def cost(m, n, k):
    a = gk.asarray(rng.standard_normal((m, k)).astype(np.float32)).astype("bfloat16")
    b = gk.asarray(rng.standard_normal((k, n)).astype(np.float32)).astype("bfloat16")
    out = Layout(a.dtype, (m, n), (n * 2, 2))
    result = gk.empty((m, n), a.dtype)

    def plain():
        with low:
            gk.matmul(a, b)

    fns = [plain]
    for every in EVERIES:
        plan = rt.plan_preemptible_matmul(layout(a), layout(b), out, None, every=every)
        save = gk.empty((plan.save_bytes // 4,), "float32")
        words = control_words(plan.grid)
        ctls = [gk.asarray(words) for _ in range(40)]
        it = iter(ctls)

        def preemptible(plan=plan, it=it, save=save):
            ctl = next(it)
            args = (a._buf, a._offset, b._buf, b._offset, result._buf, result._offset,
                    ctl._buf, ctl._offset, save._buf, save._offset)  # fmt: skip
            plan.yielding(low.handle, None, *args)

        fns.append(preemptible)
    for fn in fns:
        fn()
    gk.synchronize()
    ms = timed_pair(fns)
    tf = 2 * m * n * k / 1e9
    line = f"{m}x{n}x{k}: plain {ms[0]:.3f} ms ({tf / ms[0]:.0f} TFLOP/s)"
    for every, t in zip(EVERIES, ms[1:], strict=True):
        line += f"; never raised, every {every}: {t:.3f} ms ({t / ms[0] - 1:+.2%})"
    print(line, flush=True)


cost(8192, 8192, 8192)
cost(4096, 6144, 8192)
big = bench_sched.gk_operands(bench_sched.FLOOD_N, rng)
for every in EVERIES:
    rep = bench_sched.preemption_latency(big, every=every, ways=("kernel", "stream"),
                                         samples=SAMPLES, seed=every)  # fmt: skip
    bench_sched.print_latency(rep, f"checks every {every} K slices, {SAMPLES} raises per way")
