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
today's pacing and slicing, and torch's priority streams. Each row runs BENCH_SCHED_SERVICE_RUNS
times, each run beside a solo run of the critical loop (host stalls come and go: a p99 is
compared with the solo p99 of the same moment); p50/p99 per run and pooled. Reported: critical
p50/p99 against solo, the flood against solo and against the share of the GPU the critical work
leaves free (1 - solo p50 / period); BENCH_SCHED_SERVICE_EVENTS=1 also times each critical
product on the device (events).

The preemption latency, on the device: the preemptible 8192^3 product's yielding launch, its
word raised at random points, the raise stamped with %globaltimer (by a one-thread kernel that
writes the word, or stamps before the stream writes it, or bracketed by the GEMM's own checks
when the stream alone writes it) and each block's end stamped by the GEMM (its control words'
records): latency = the last block's end - the raise; the first block's end and the first check
that saw the word beside it; the old measure (an event the host records before the raise -> the
launch's end event, host gaps included) for comparison.

Writes bench_sched.json (to $OUT when set). BENCH_SCHED_PARTS picks parts (latency, service,
back_to_back), BENCH_SCHED_SERVICE_FLOODS / _SCHEDS / _TORCH the service rows;
BENCH_SCHED_SECONDS, BENCH_SCHED_SERVICE_SECONDS and BENCH_SCHED_LATENCY_SAMPLES shorten a run.
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
SERVICE_SECONDS = float(os.environ.get("BENCH_SCHED_SERVICE_SECONDS", 2.0))
MEM_N = 1 << 28  # float32 elements of the memory-bound flood's operand
CAP_US = 300.0  # the preempting scheduler's cap on best-effort work in flight (expected us)
LATENCY_SAMPLES = int(os.environ.get("BENCH_SCHED_LATENCY_SAMPLES", 200))
SERVICE_RUNS = int(os.environ.get("BENCH_SCHED_SERVICE_RUNS", 3))
# Which parts run (all by default): back_to_back (issue 7's table), service, latency; and which
# service rows: floods (gemm, mem), schedulers (preempt, pacing+slicing), torch's (0: none).
PARTS = os.environ.get("BENCH_SCHED_PARTS", "back_to_back,service,latency").split(",")
SERVICE_FLOODS = os.environ.get("BENCH_SCHED_SERVICE_FLOODS", "gemm,mem").split(",")
SERVICE_SCHEDS = os.environ.get("BENCH_SCHED_SERVICE_SCHEDS", "preempt,pacing+slicing").split(",")
SERVICE_TORCH = os.environ.get("BENCH_SCHED_SERVICE_TORCH", "1") != "0"
# 1: each run also times the critical products on the device (events), solo and beside the flood.
SERVICE_EVENTS = os.environ.get("BENCH_SCHED_SERVICE_EVENTS", "0") != "0"
SERVICE_PERIODS_S = tuple(
    float(x) * 1e-6 for x in os.environ.get("BENCH_SCHED_SERVICE_PERIODS_US", "1000,300").split(",")
)


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


def gk_request(sched, a, b, device=None):
    """One request: a guaranteed task of one product. `device` (a dict of lists): also, per
    request, the device time from the task's stream passing its raised word to the product's end
    (events) and the host's time in each step (entering the task, launching the product, ending
    the task: the product's wait and the word lowered), in seconds."""

    def request():
        if device is None:
            with sched.task(qos="guaranteed", memory="256MiB", name="request"):
                gk.matmul(a, b)  # the task's end waits for it
            return
        t0 = time.perf_counter()
        with sched.task(qos="guaranteed", memory="256MiB", name="request"):
            t1 = time.perf_counter()
            start = gk.Event().record()
            gk.matmul(a, b)
            end = gk.Event().record()
            t2 = time.perf_counter()
        t3 = time.perf_counter()
        for key, v in (("device", start.elapsed_ms(end) * 1e-3), ("host: enter", t1 - t0),
                       ("host: launch", t2 - t1), ("host: end", t3 - t2)):  # fmt: skip
            device[key].append(v)

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


def gk_service(sched, small, flood_fn, flood_args, period, device=None):
    """(latencies, flood amount per second) of the service beside a best-effort flood (or
    none); `device`: see gk_request."""
    stop, result = threading.Event(), []
    fut = None
    if flood_fn is not None:
        fut = sched.submit(flood_fn, *flood_args, stop, result, qos="best_effort", name="flood")
        time.sleep(0.2)
    lat = open_loop(gk_request(sched, *small, device), period, SERVICE_SECONDS)
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


# The raise stamped on the device: one thread reads %globaltimer and (raise != 0) writes the word
# itself, then reads the clock again after a fence. It needs a free warp slot beside the
# best-effort GEMM (one block per SM of 226 KiB of shared memory and 168 registers a thread leave
# 1 KiB and 1024 registers): where it gets none it runs only once a GEMM block has left, and
# such samples are counted as "late", not measured.
RAISE_SOURCE = r"""
extern "C" __global__ void gk_bench_raise(unsigned* word, unsigned long long* stamp, int raise) {
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)::"memory");
    if (raise) {
        *(volatile unsigned*)word = 1u;
        __threadfence();
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)::"memory");
    stamp[0] = t0;
    stamp[1] = t1;
}
"""
# How the word is raised: by the stamping kernel itself; by the stream (cuStreamWriteValue32, as
# guaranteed tasks do) right after the stamping kernel; by the stream alone, the raise then
# bracketed by the GEMM's own checks (after the latest that found the words lowered, before the
# earliest that found one raised).
RAISE_WAYS = ("kernel", "kernel+stream", "stream")


def preemption_latency(big, every=None, ways=RAISE_WAYS, samples=None, seed=0):
    """Preemption latency of the preemptible 8192^3 product, raised at random points of its
    yielding launch, measured on the device (%globaltimer): per way of raising, a list of samples
    {raise_ns (kernel ways), raise_lo/raise_hi (the GEMM's checks), first_exit_ns, last_exit_ns,
    blocks_seen, host_event_us (the old measure: an event the host records before the raise ->
    the launch's end event)}, with "late" (a GEMM block had ended before the raise: the product's
    end, or the stamping kernel waiting for an SM) and "missed" (no block saw the raise) counts;
    None where products cannot yield here."""
    from gpukit.array import layout
    from gpukit.runtime import runtime
    from gpukit.runtime.backend import Layout
    from gpukit.runtime.cuda import preempt

    rt = runtime()
    if not rt.capabilities.preemption or not rt.preemption_available()[0]:
        return None
    samples = LATENCY_SAMPLES if samples is None else samples
    a, b = big
    out = Layout(a.dtype, (FLOOD_N, FLOOD_N), (FLOOD_N * a.dtype.itemsize, a.dtype.itemsize))
    kw = {} if every is None else {"every": every}
    plan = rt.plan_preemptible_matmul(layout(a), layout(b), out, None, **kw)
    least, greatest = gk.Stream.priority_range()
    low, high = gk.Stream(least), gk.Stream(greatest)
    result = gk.empty((FLOOD_N, FLOOD_N), a.dtype)
    save = gk.empty((plan.save_bytes // 4,), "float32")
    words = preempt.control_words(plan.grid)
    raiser = gk.RawKernel(RAISE_SOURCE, "gk_bench_raise")
    word = np.uint64(rt.device.preempt_flags)  # word 0 of the device's preemption words
    stamp = gk.zeros((2,), "uint64")
    raiser.compile()
    r = random.Random(seed)
    solo = time.perf_counter()
    plan(low.handle, None, a._buf, a._offset, b._buf, b._offset)
    low.synchronize()
    solo = time.perf_counter() - solo
    report = {}
    for way in ways:
        got, late, missed = [], 0, 0
        for _ in range(samples):
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
            if way != "stream":
                raiser(1, 32, (word, stamp, np.int32(way == "kernel")), stream=high)
            if way != "kernel":
                rt.raise_preemption(high.handle, 0)
            high.wait_event(gone)  # lowered once the launch has yielded (or ended)
            rt.lower_preemption(high.handle, 0)
            low.synchronize()
            high.synchronize()
            st = preempt.stamps(ctl.to_numpy(), plan.grid)  # the yielding launch's stamps
            t0 = int(stamp.to_numpy()[0])
            plan.finishing(low.handle, None, *args)  # resumes the saved tiles
            low.synchronize()
            seen = st["seen"][st["seen"] > 0]
            if seen.size == 0:  # the launch ended before the raise reached it
                missed += 1
                continue
            exits = st["exit"]
            clear = st["clear"][st["clear"] > 0]
            x = {
                "raise_lo": int(clear.max()) if clear.size else None,
                "raise_hi": int(seen.min()),
                "first_exit_ns": int(exits.min()),
                "last_exit_ns": int(exits.max()),
                "blocks_seen": int(seen.size),
                "host_event_us": raised.elapsed_ms(gone) * 1e3,
            }
            # A block gone before the raise: the product's last blocks leaving (or, raised by
            # the kernel, the raiser waiting for an SM until one did): not a preemption.
            t_raise = t0 if way != "stream" else x["raise_lo"]
            if t_raise is None or t_raise == 0 or exits.min() < t_raise:
                late += 1
                continue
            if way != "stream":
                x["raise_ns"] = t0
            got.append(x)
        report[way] = {"samples": got, "late": late, "missed": missed}
    return report


def latency_rows(report):
    """{way: {measure: [us per sample]}} from preemption_latency's report: last / first block
    gone after the raise and the first check that saw it (kernel ways: from the kernel's stamp;
    stream: from the latest check that found the words lowered, an upper bound, with the
    bracket's width)."""
    rows = {}
    for way, rep in report.items():
        xs = rep["samples"]
        if way == "stream":
            xs = [x for x in xs if x["raise_lo"] is not None]
            base = [x["raise_lo"] for x in xs]
        else:
            base = [x["raise_ns"] for x in xs]
        us = {
            "last block gone": [
                (x["last_exit_ns"] - b) / 1e3 for x, b in zip(xs, base, strict=True)
            ],
            "first block gone": [
                (x["first_exit_ns"] - b) / 1e3 for x, b in zip(xs, base, strict=True)
            ],
            "first check saw it": [
                (x["raise_hi"] - b) / 1e3 for x, b in zip(xs, base, strict=True)
            ],
            "host event (old measure)": [x["host_event_us"] for x in xs],
        }
        if way == "stream":
            us["bracket width"] = [(x["raise_hi"] - x["raise_lo"]) / 1e3 for x in xs]
        rows[way] = us
    return rows


def print_latency(report, title):
    print(f"\npreemption latency, {title} (us; device %globaltimer stamps)")
    print(f"{'raised by':14s} {'measure':26s} {'n':>4s} " + " ".join(
        f"{q:>6s}" for q in ("min", "p10", "p50", "p90", "p99", "max")))  # fmt: skip
    for way, us in latency_rows(report).items():
        rep = report[way]
        for name, v in us.items():
            if not v:
                continue
            q = np.percentile(v, [0, 10, 50, 90, 99, 100])
            print(f"{way:14s} {name:26s} {len(v):4d} " + " ".join(f"{x:6.1f}" for x in q))
        print(f"{'':14s} ({rep['late']} late: a GEMM block had ended before the raise, at"
              f" the product's end or the raiser waiting for an SM; {rep['missed']} raised after"
              " the launch ended)")  # fmt: skip


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
    """The service rows: each row run SERVICE_RUNS times, interleaved with the critical loop's
    solo run (so each run's p99 has a solo p99 of the same moment beside it); p50/p99 per run and
    pooled over the runs."""
    x = gk.asarray(np.random.default_rng(1).standard_normal(MEM_N).astype(np.float32))
    y = gk.empty_like(x)
    rows, report = [], {}
    floods = {
        "gemm": (gk_flops_flood, big, 1e12, "TFLOP/s"),
        "mem": (gk_mem_flood, (x, y), 1e9, "GB/s"),
    }
    floods = {k: v for k, v in floods.items() if k in SERVICE_FLOODS}
    configs = (
        ("gpukit preempt", dict(preempt=True, cap_us=CAP_US)),
        ("gpukit pacing+slicing", dict()),
    )
    scheds = {}
    for name, kw in configs:
        if name.split()[1] not in SERVICE_SCHEDS:
            continue
        try:
            scheds[name] = gk.Scheduler(workers=2, **kw)
        except ValueError as e:
            print(f"{name}: unavailable ({e})")
    flood_solo = {}
    for kind, (fn, args, unit, _) in floods.items():
        flood_solo[kind] = gk_flood_solo(next(iter(scheds.values())), fn, args) / unit
    for period in SERVICE_PERIODS_S:
        sched0 = next(iter(scheds.values()))
        tag = f"{period * 1e6:.0f} us"
        solo_runs, runs = [], collections.defaultdict(list)
        # (sched or "solo", flood) -> gk_request's device and host times
        device = collections.defaultdict(lambda: collections.defaultdict(list))
        for _ in range(SERVICE_RUNS):
            solo_runs.append(gk_service(sched0, small, None, None, period)[0])
            for name, sched in scheds.items():
                for kind, (fn, args, unit, _) in floods.items():
                    lat, rate = gk_service(sched, small, fn, args, period)
                    runs[name, kind].append((lat, rate / unit))
            if not SERVICE_EVENTS:
                continue
            # The same, timed on the device too (events around each product: not in the rows
            # above, whose host latency they would add to).
            gk_service(sched0, small, None, None, period, device["solo", None])
            for name, sched in scheds.items():
                for kind, (fn, args, _, _) in floods.items():
                    gk_service(sched, small, fn, args, period, device[name, kind])
        if device:
            print(f"\nservice, {tag}, timed per step: the device from the raised word to the "
                  "product's end (events), the host entering the task, launching, ending it "
                  "(p50/p99 us)")  # fmt: skip
            solo_steps = device["solo", None]
            for (name, kind), steps in device.items():
                label = "solo" if name == "solo" else f"{name} + {kind} flood"
                cells = []
                for key, xs in steps.items():
                    d = percentiles_us(xs)
                    cell = f"{key} {d[0]:.1f}/{d[1]:.1f}"
                    if name != "solo":
                        ref = percentiles_us(solo_steps[key])
                        cell += f" ({d[0] - ref[0]:+.1f}/{d[1] - ref[1]:+.1f})"
                    cells.append(cell)
                print(f"  {label}: " + "; ".join(cells))
            report[f"steps {tag}"] = {
                f"{k[0]}+{k[1]}": {key: percentiles_us(xs) for key, xs in steps.items()}
                for k, steps in device.items()
            }
        solo = percentiles_us([x for lat in solo_runs for x in lat])
        solo_per_run = [percentiles_us(lat) for lat in solo_runs]
        free = max(0.0, 1.0 - solo[0] * 1e-6 / period)
        report[f"gpukit solo {tag}"] = solo
        rows.append((f"gpukit critical solo, period {tag}", solo, None, None, None,
                     solo_per_run, None))  # fmt: skip
        for (name, kind), got in runs.items():
            _, _, unit, label = floods[kind]
            p = percentiles_us([x for lat, _ in got for x in lat])
            rate = float(np.mean([r for _, r in got]))
            rows.append((f"{name} + {kind} flood, {tag}", p, solo, rate,
                         (flood_solo[kind], free, label),
                         [percentiles_us(lat) for lat, _ in got], solo_per_run))  # fmt: skip
        if not SERVICE_TORCH:
            continue
        try:
            t = torch_service(period)
        except Exception as e:  # torch is only there to compare against
            print("torch unavailable:", e)
            continue
        t_solo = percentiles_us(t["solo"][0])
        rows.append((f"torch critical solo, period {tag}", t_solo, None, None, None, None,
                     None))  # fmt: skip
        t_free = max(0.0, 1.0 - t_solo[0] * 1e-6 / period)
        for kind, unit, label in (("gemm", 1e12, "TFLOP/s"), ("mem", 1e9, "GB/s")):
            lat, rate, solo_rate = t[kind]
            rows.append((f"torch priority streams + {kind} flood, {tag}",
                         percentiles_us(lat), t_solo, rate / unit,
                         (solo_rate / unit, t_free, label), None, None))  # fmt: skip
    for sched in scheds.values():
        sched.shutdown()
    print(
        f"\nservice model ({SERVICE_RUNS} runs of {SERVICE_SECONDS:g} s per row, pooled; each "
        "run beside a solo run): critical p50/p99 (us, x solo); flood (x its solo, x solo * free "
        "share); then each run's p50/p99 (x the same run's solo)"
    )
    width = max(len(r[0]) for r in rows)
    out = []
    for name, (p50, p99), solo, rate, flood, per_run, solo_per_run in rows:
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
        if per_run:
            entry["runs_us"] = per_run
            if solo_per_run is not None and solo is not None:
                entry["solo_runs_us"] = solo_per_run
                each = "; ".join(
                    f"{a:.0f}/{b:.0f} ({a / c:.2f}x, {b / d:.2f}x)"
                    for (a, b), (c, d) in zip(per_run, solo_per_run, strict=True)
                )
            else:
                each = "; ".join(f"{a:.0f}/{b:.0f}" for a, b in per_run)
            print(f"{'':{width}s}   runs: {each}")
        out.append(entry)
    return {"service": out, **report}


def back_to_back(small, big):
    """Issue 7's table: the critical loop back to back, solo, beside the flood on priority streams
    and under the pacing and slicing scheduler, and torch's."""
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
    return rows


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

    report = {"info": str(gk.info()), "parts": PARTS}
    path = os.path.join(os.environ.get("OUT", "."), "bench_sched.json")

    def dump():  # after each part: a run cut short keeps what it measured
        with open(path, "w") as f:
            json.dump(report, f, indent=1)

    if "latency" in PARTS:
        lat = preemption_latency(big)
        if lat:
            from gpukit.runtime.cuda.preempt import EVERY

            print_latency(lat, f"{LATENCY_SAMPLES} raises per way, checks every {EVERY} K slices")
            report["preemption_latency"] = {"every": EVERY, "ways": lat}
            report["preemption_latency_us"] = {
                way: {k: [round(v, 3) for v in vs] for k, vs in us.items()}
                for way, us in latency_rows(lat).items()
            }
            dump()
    if "service" in PARTS:
        report.update(service_model(small, big))
        dump()
    if "back_to_back" in PARTS:
        report["back_to_back"] = back_to_back(small, big)
        dump()
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
