"""The QoS scheduler (issue 7): a latency-critical loop (2048x2048 matmul, then synchronize) alone,
then beside a best-effort flood of 8192x8192 matmuls in another thread, (a) on plain streams with
priorities, (b) under gpukit.Scheduler (critical loop guaranteed, flood best effort: paced, and
split into row blocks while should_slice() says so). p50/p99 of the critical loop and the flood's
TFLOP/s in each case, and torch's same experiment (high/low priority streams) in the same run.
Target under the scheduler: p50 and p99 within 1.5x solo, flood >= 70% of its solo throughput.

The service model (issue 17): critical requests arrive at a fixed rate (one per 1 ms, one per
0.3 ms), each a guaranteed task of a 2048^3 bf16 product (its end synchronizes), latency from
arrival to completion; beside a best-effort flood of 8192^3 products or of a memory-bound kernel
(1 GiB read and written per op), under a preempting scheduler (the flood's products yield between
tiles and between K slices of a tile; the memory-bound flood capped by expected duration),
today's pacing and slicing, and
torch's priority streams. Reported: critical p50/p99 against solo, the flood against solo and
against the share of the GPU the critical work leaves free (1 - solo p50 / period), and the
preemption latency (word raised -> the best-effort launch gone, by device events). Writes
bench_sched.json (to $OUT when set). BENCH_SCHED_SECONDS, BENCH_SCHED_SERVICE_SECONDS and
BENCH_SCHED_LATENCY_SAMPLES shorten a run (fewer samples of the same measures).
"""

import collections
import json
import os
import random
import sys
import threading
import time

import numpy as np

import gpukit as gk

CRITICAL_N = 2048
FLOOD_N = 8192
SECONDS = float(os.environ.get("BENCH_SCHED_SECONDS", 3.0))
FLOOD_IN_FLIGHT = 2  # matmuls the flood keeps queued (it synchronizes on older ones' events)
# Both loops are Python threads: with the default 5 ms switch interval, the critical thread can
# wait milliseconds for the GIL behind the flood's launches, for gpukit and torch alike.
SWITCH_INTERVAL_S = 1e-4


DTYPE = "bfloat16"
SERVICE_PERIODS_S = (1e-3, 0.3e-3)
SERVICE_SECONDS = float(os.environ.get("BENCH_SCHED_SERVICE_SECONDS", 2.0))
MEM_N = 1 << 28  # float32 elements of the memory-bound flood's operand
CAP_US = 300.0  # the preempting scheduler's cap on best-effort work in flight (expected us)
LATENCY_SAMPLES = int(os.environ.get("BENCH_SCHED_LATENCY_SAMPLES", 200))


def percentiles_us(samples):
    s = np.asarray(samples) * 1e6
    return float(np.percentile(s, 50)), float(np.percentile(s, 99))


def tflops(count, n, seconds):
    return count * 2 * n**3 / seconds / 1e12


# --- gpukit ---------------------------------------------------------------------------------------
def gk_operands(n, rng):
    x = rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n)
    return gk.asarray(x).astype(DTYPE), gk.asarray(x.T.copy()).astype(DTYPE)


def gk_critical(a, b, seconds):
    latencies = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        gk.matmul(a, b)
        gk.synchronize()
        latencies.append(time.perf_counter() - t)
    return latencies


def gk_flood(a, b, stop, result):
    """Matmuls until `stop`; result[:] = (completed, seconds)."""
    queued = collections.deque()
    done = 0
    start = time.perf_counter()
    while not stop.is_set():
        gk.matmul(a, b)  # sliced into row blocks by the runtime while should_slice()
        queued.append(gk.Event(timing=False).record())
        if len(queued) > FLOOD_IN_FLIGHT:
            queued.popleft().synchronize()
            done += 1
    gk.synchronize()
    result[:] = [done + len(queued), time.perf_counter() - start]


def in_thread(fn, *args, stream=None):
    def body():
        if stream is None:
            fn(*args)
        else:
            with stream:
                fn(*args)

    t = threading.Thread(target=body)
    t.start()
    return t


def gk_solo_flood(big):
    stop, result = threading.Event(), []
    t = in_thread(gk_flood, *big, stop, result)
    time.sleep(SECONDS)
    stop.set()
    t.join()
    return tflops(result[0], FLOOD_N, result[1])


def gk_plain_streams(small, big):
    least, greatest = gk.Stream.priority_range()
    stop, result = threading.Event(), []
    t = in_thread(gk_flood, *big, stop, result, stream=gk.Stream(least))
    time.sleep(0.2)  # the flood is under way
    with gk.Stream(greatest):
        lat = gk_critical(*small, SECONDS)
    stop.set()
    t.join()
    return lat, tflops(result[0], FLOOD_N, result[1])


def gk_scheduled(small, big, slice_rows, pace_bound):
    sched = gk.Scheduler(slice_rows=slice_rows, pace_bound=pace_bound, workers=2)
    stop, result = threading.Event(), []
    flood = sched.submit(gk_flood, *big, stop, result, qos="best_effort", name="flood")
    time.sleep(0.2)
    with sched.task(qos="guaranteed", memory="1GiB", name="critical"):
        lat = gk_critical(*small, SECONDS)
    stop.set()
    flood.result()
    stats = sched.stats()
    sched.shutdown()
    return lat, tflops(result[0], FLOOD_N, result[1]), stats


# --- torch ----------------------------------------------------------------------------------------
def torch_experiment():
    import torch

    dt = torch.bfloat16
    a, b = (torch.randn(CRITICAL_N, CRITICAL_N, device="cuda", dtype=dt) for _ in range(2))
    fa, fb = (torch.randn(FLOOD_N, FLOOD_N, device="cuda", dtype=dt) for _ in range(2))
    torch.matmul(a, b), torch.matmul(fa, fb)
    torch.cuda.synchronize()

    def critical():
        s = torch.cuda.current_stream()
        latencies = []
        end = time.perf_counter() + SECONDS
        while time.perf_counter() < end:
            t = time.perf_counter()
            torch.matmul(a, b)
            s.synchronize()
            latencies.append(time.perf_counter() - t)
        return latencies

    def flood(stop, result, stream):
        with torch.cuda.stream(stream):
            queued, done, start = collections.deque(), 0, time.perf_counter()
            while not stop.is_set():
                torch.matmul(fa, fb)
                e = torch.cuda.Event()
                e.record()
                queued.append(e)
                if len(queued) > FLOOD_IN_FLIGHT:
                    queued.popleft().synchronize()
                    done += 1
            stream.synchronize()
            result[:] = [done + len(queued), time.perf_counter() - start]

    solo = percentiles_us(critical())
    stop, result = threading.Event(), []
    t = threading.Thread(target=flood, args=(stop, result, torch.cuda.Stream()))
    t.start()
    time.sleep(SECONDS)
    stop.set()
    t.join()
    solo_flood = tflops(result[0], FLOOD_N, result[1])
    stop, result = threading.Event(), []
    low, high = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=-1)
    t = threading.Thread(target=flood, args=(stop, result, low))
    t.start()
    time.sleep(0.2)
    with torch.cuda.stream(high):
        beside = percentiles_us(critical())
    stop.set()
    t.join()
    return solo, solo_flood, beside, tflops(result[0], FLOOD_N, result[1])


# --- the service model (issue 17) -----------------------------------------------------------
def open_loop(request, period, seconds):
    """Latencies (arrival -> completion) of requests arriving every `period` s; `request()` runs
    one to completion."""
    latencies = []
    start = time.perf_counter()
    arrival = start + 0.01
    while arrival < start + seconds:
        while time.perf_counter() < arrival:
            time.sleep(0)  # let the flood's thread run
        request()
        latencies.append(time.perf_counter() - arrival)
        arrival += period
    return latencies


def gk_request(sched, a, b):
    def request():
        with sched.task(qos="guaranteed", memory="256MiB", name="request"):
            gk.matmul(a, b)  # the task's end waits for it

    return request


def gk_mem_flood(x, y, stop, result):
    """y = x * c until `stop`; result[:] = (bytes moved, seconds)."""
    queued, done, start = collections.deque(), 0, time.perf_counter()
    while not stop.is_set():
        gk.multiply(x, 1.0001, out=y)
        queued.append(gk.Event(timing=False).record())
        if len(queued) > FLOOD_IN_FLIGHT:
            queued.popleft().synchronize()
            done += 1
    gk.synchronize()
    result[:] = [(done + len(queued)) * 2 * x.nbytes, time.perf_counter() - start]


def gk_service(sched, small, flood_fn, flood_args, period):
    """(latencies, flood amount per second) of the service beside a best-effort flood (or
    none)."""
    stop, result = threading.Event(), []
    fut = None
    if flood_fn is not None:
        fut = sched.submit(flood_fn, *flood_args, stop, result, qos="best_effort", name="flood")
        time.sleep(0.2)
    lat = open_loop(gk_request(sched, *small), period, SERVICE_SECONDS)
    stop.set()
    if fut is None:
        return lat, None
    fut.result()
    return lat, result[0] / result[1]


def gk_flood_solo(sched, flood_fn, flood_args):
    """The flood's rate alone, after a short run that compiles what it launches (its
    preemptible form's first use would otherwise fall inside the timed run)."""
    for seconds in (0.3, SERVICE_SECONDS):
        stop, result = threading.Event(), []
        fut = sched.submit(flood_fn, *flood_args, stop, result, qos="best_effort", name="flood")
        time.sleep(seconds)
        stop.set()
        fut.result()
    return result[0] / result[1]


def gk_flops_flood(a, b, stop, result):
    gk_flood(a, b, stop, result)
    result[0] *= 2 * FLOOD_N**3


def preemption_latency(big):
    """Device time from a preemption word's raise to the end of the best-effort launch it
    interrupts (the yielding launch of the preemptible 8192^3 product, raised at random points),
    in us; None where products cannot yield here."""
    from gpukit.array import layout
    from gpukit.runtime import runtime
    from gpukit.runtime.backend import Layout
    from gpukit.runtime.cuda.preempt import control_words

    rt = runtime()
    if not rt.capabilities.preemption or not rt.preemption_available()[0]:
        return None
    a, b = big
    out = Layout(a.dtype, (FLOOD_N, FLOOD_N), (FLOOD_N * a.dtype.itemsize, a.dtype.itemsize))
    plan = rt.plan_preemptible_matmul(layout(a), layout(b), out, None)
    least, greatest = gk.Stream.priority_range()
    low, high = gk.Stream(least), gk.Stream(greatest)
    result = gk.empty((FLOOD_N, FLOOD_N), a.dtype)
    save = gk.empty((plan.save_bytes // 4,), "float32")
    words = control_words(plan.grid)
    r = random.Random(0)
    solo = time.perf_counter()
    plan(low.handle, None, a._buf, a._offset, b._buf, b._offset)
    low.synchronize()
    solo = time.perf_counter() - solo
    samples = []
    for _ in range(LATENCY_SAMPLES):
        raised, gone = gk.Event(), gk.Event()
        ctl = gk.asarray(words)
        gk.synchronize()
        args = (a._buf, a._offset, b._buf, b._offset, result._buf, result._offset,
                ctl._buf, ctl._offset, save._buf, save._offset)  # fmt: skip
        plan.yielding(low.handle, None, *args)
        gone.record(low)
        spin_until = time.perf_counter() + r.uniform(0.05, 0.8) * solo
        while time.perf_counter() < spin_until:
            pass
        raised.record(high)
        rt.raise_preemption(high.handle, 0)
        high.wait_event(gone)  # lowered once the launch has yielded (or ended)
        rt.lower_preemption(high.handle, 0)
        plan.finishing(low.handle, None, *args)  # resumes the saved tiles
        low.synchronize()
        high.synchronize()
        us = raised.elapsed_ms(gone) * 1e3
        if us > 0:  # raised before the launch ended
            samples.append(us)
    return samples


def torch_service(period):
    """torch's priority streams in the same service model: (solo, beside GEMM flood, beside
    memory-bound flood) as (latencies, flood per second)."""
    import torch

    dt = torch.bfloat16
    a, b = (torch.randn(CRITICAL_N, CRITICAL_N, device="cuda", dtype=dt) for _ in range(2))
    fa, fb = (torch.randn(FLOOD_N, FLOOD_N, device="cuda", dtype=dt) for _ in range(2))
    x = torch.randn(MEM_N, device="cuda")
    y = torch.empty_like(x)
    low, high = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=-1)

    def request():
        with torch.cuda.stream(high):
            torch.matmul(a, b)
        high.synchronize()

    def flood(step, amount):
        def run(stop, result):
            with torch.cuda.stream(low):
                queued, done, start = collections.deque(), 0, time.perf_counter()
                while not stop.is_set():
                    step()
                    e = torch.cuda.Event()
                    e.record()
                    queued.append(e)
                    if len(queued) > FLOOD_IN_FLIGHT:
                        queued.popleft().synchronize()
                        done += 1
                low.synchronize()
                result[:] = [(done + len(queued)) * amount / (time.perf_counter() - start)]

        return run

    gemm = flood(lambda: torch.matmul(fa, fb), 2 * FLOOD_N**3)
    mem = flood(lambda: torch.mul(x, 1.0001, out=y), 2 * x.numel() * 4)
    request()
    out = {"solo": (open_loop(request, period, SERVICE_SECONDS), None)}
    for name, fl in (("gemm", gemm), ("mem", mem)):
        stop, result = threading.Event(), []
        t = threading.Thread(target=fl, args=(stop, result))
        t.start()
        time.sleep(SERVICE_SECONDS)
        stop.set()
        t.join()
        solo_rate = result[0]
        stop, result = threading.Event(), []
        t = threading.Thread(target=fl, args=(stop, result))
        t.start()
        time.sleep(0.2)
        lat = open_loop(request, period, SERVICE_SECONDS)
        stop.set()
        t.join()
        out[name] = (lat, result[0], solo_rate)
    return out


def service_model(small, big):
    x = gk.asarray(np.random.default_rng(1).standard_normal(MEM_N).astype(np.float32))
    y = gk.empty_like(x)
    rows, report = [], {}
    floods = {
        "gemm": (gk_flops_flood, big, 1e12, "TFLOP/s"),
        "mem": (gk_mem_flood, (x, y), 1e9, "GB/s"),
    }
    configs = (
        ("gpukit preempt", dict(preempt=True, cap_us=CAP_US)),
        ("gpukit pacing+slicing", dict()),
    )
    scheds = {}
    for name, kw in configs:
        try:
            scheds[name] = gk.Scheduler(workers=2, **kw)
        except ValueError as e:
            print(f"{name}: unavailable ({e})")
    flood_solo = {}
    for kind, (fn, args, unit, _) in floods.items():
        flood_solo[kind] = gk_flood_solo(next(iter(scheds.values())), fn, args) / unit
    for period in SERVICE_PERIODS_S:
        sched0 = next(iter(scheds.values()))
        solo = percentiles_us(gk_service(sched0, small, None, None, period)[0])
        free = max(0.0, 1.0 - solo[0] * 1e-6 / period)
        report[f"gpukit solo {period * 1e6:.0f}us"] = solo
        rows.append((f"gpukit critical solo, period {period * 1e6:.0f} us", solo, None, None, None))
        for name, sched in scheds.items():
            for kind, (fn, args, unit, label) in floods.items():
                lat, rate = gk_service(sched, small, fn, args, period)
                p = percentiles_us(lat)
                rate /= unit
                rows.append((f"{name} + {kind} flood, {period * 1e6:.0f} us", p, solo, rate,
                             (flood_solo[kind], free, label)))  # fmt: skip
        try:
            t = torch_service(period)
        except Exception as e:  # torch is only there to compare against
            print("torch unavailable:", e)
            continue
        t_solo = percentiles_us(t["solo"][0])
        rows.append(
            (f"torch critical solo, period {period * 1e6:.0f} us", t_solo, None, None, None)
        )
        t_free = max(0.0, 1.0 - t_solo[0] * 1e-6 / period)
        for kind, unit, label in (("gemm", 1e12, "TFLOP/s"), ("mem", 1e9, "GB/s")):
            lat, rate, solo_rate = t[kind]
            rows.append((f"torch priority streams + {kind} flood, {period * 1e6:.0f} us",
                         percentiles_us(lat), t_solo, rate / unit,
                         (solo_rate / unit, t_free, label)))  # fmt: skip
    for sched in scheds.values():
        sched.shutdown()
    print("\nservice model: critical p50/p99 (us, x solo); flood (x its solo, x solo * free share)")
    width = max(len(r[0]) for r in rows)
    out = []
    for name, (p50, p99), solo, rate, flood in rows:
        line = f"{name:{width}s} p50 {p50:8.1f} p99 {p99:8.1f}"
        entry = {"name": name, "p50_us": p50, "p99_us": p99}
        if solo is not None:
            line += f" ({p50 / solo[0]:.2f}x, {p99 / solo[1]:.2f}x)"
            entry.update(p50_x=p50 / solo[0], p99_x=p99 / solo[1])
        if rate is not None:
            solo_rate, free, label = flood
            of_free = rate / (solo_rate * free) if free else float("nan")
            line += (
                f"  flood {rate:8.1f} {label} ({rate / solo_rate:.0%} of solo, "
                f"{of_free:.0%} of the free share)"
            )
            entry.update(flood=rate, flood_unit=label, flood_solo=solo_rate, free_share=free)
        print(line)
        out.append(entry)
    lat = preemption_latency(big)
    if lat:
        q = np.percentile(lat, [0, 50, 90, 99, 100])
        print(
            f"preemption latency (word raised -> launch gone, {len(lat)} samples, us): "
            f"min {q[0]:.1f} p50 {q[1]:.1f} p90 {q[2]:.1f} p99 {q[3]:.1f} max {q[4]:.1f}"
        )
    return {"service": out, "preemption_latency_us": lat}


def main():
    print(gk.info())
    if gk.backend() != "cuda":
        print("bench_sched needs the CUDA backend; skipped")
        return
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    rng = np.random.default_rng(0)
    small, big = gk_operands(CRITICAL_N, rng), gk_operands(FLOOD_N, rng)
    gk.matmul(*small), gk.matmul(*big), gk.matmul(big[0][:128], big[1])
    gk.synchronize()
    print(
        f"dtype {DTYPE}; critical {CRITICAL_N}^3 matmul + sync; flood {FLOOD_N}^3; "
        f"GIL switch interval {SWITCH_INTERVAL_S * 1e6:.0f} us"
    )

    solo = percentiles_us(gk_critical(*small, SECONDS))
    solo_flood = gk_solo_flood(big)
    plain_lat, plain_flood = gk_plain_streams(small, big)
    plain = percentiles_us(plain_lat)
    try:
        t_solo, t_solo_flood, t_beside, t_flood = torch_experiment()
    except Exception as e:  # torch is only there to compare against
        print("torch unavailable:", e)
        t_solo = t_beside = (None, None)
        t_solo_flood = t_flood = None

    def row(label, ours, theirs=None):
        return label, ours, theirs

    rows = [
        row("critical p50 solo (us)", solo[0], t_solo[0]),
        row("critical p99 solo (us)", solo[1], t_solo[1]),
        row("flood solo (TFLOP/s)", solo_flood, t_solo_flood),
        row("(a) priority streams: critical p50 (us)", plain[0], t_beside[0]),
        row("(a) priority streams: critical p99 (us)", plain[1], t_beside[1]),
        row("(a) priority streams: flood (TFLOP/s)", plain_flood, t_flood),
    ]
    for slice_rows, bound in ((256, 1), (128, 1), (512, 2)):
        lat, flood, stats = gk_scheduled(small, big, slice_rows, bound)
        p50, p99 = percentiles_us(lat)
        tag = f"(b) scheduler rows={slice_rows} bound={bound}:"
        rows += [
            row(f"{tag} critical p50 (us)", p50),
            row(f"{tag} critical p99 (us)", p99),
            row(f"{tag} flood (TFLOP/s)", flood),
        ]
        ok = p50 <= 1.5 * solo[0] and p99 <= 1.5 * solo[1] and flood >= 0.7 * solo_flood
        be = stats["best_effort"]
        print(
            f"{tag} p50 {p50 / solo[0]:.2f}x, p99 {p99 / solo[1]:.2f}x, flood "
            f"{flood / solo_flood:.0%} of solo -> target {'met' if ok else 'NOT met'}; "
            f"best effort: {be['kernels']} kernels, throttled {be['throttled_s']:.2f} s"
        )
    width = max(len(r[0]) for r in rows)
    print(f"\n{'measure':{width}s} {'gpukit':>10s} {'torch':>10s}")
    for name, ours, theirs in rows:
        fmt = [("" if v is None else f"{v:10.1f}") for v in (ours, theirs)]
        print(f"{name:{width}s} {fmt[0]:>10s} {fmt[1]:>10s}")
    service = service_model(small, big)
    path = os.path.join(os.environ.get("OUT", "."), "bench_sched.json")
    with open(path, "w") as f:
        json.dump({"info": str(gk.info()), "back_to_back": rows, **service}, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
