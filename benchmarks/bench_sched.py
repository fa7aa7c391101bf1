"""The QoS scheduler (issue 7): a latency-critical loop (2048x2048 matmul, then synchronize) alone,
then beside a best-effort flood of 8192x8192 matmuls in another thread, (a) on plain streams with
priorities, (b) under gpukit.Scheduler (critical loop guaranteed, flood best effort: paced, and
split into row blocks while should_slice() says so). p50/p99 of the critical loop and the flood's
TFLOP/s in each case, and torch's same experiment (high/low priority streams) in the same run.
Target under the scheduler: p50 and p99 within 1.5x solo, flood >= 70% of its solo throughput.
"""

import collections
import sys
import threading
import time

import numpy as np

import gpukit as gk

CRITICAL_N = 2048
FLOOD_N = 8192
SECONDS = 3.0
FLOOD_IN_FLIGHT = 2  # matmuls the flood keeps queued (it synchronizes on older ones' events)
# Both loops are Python threads: with the default 5 ms switch interval, the critical thread can
# wait milliseconds for the GIL behind the flood's launches, for gpukit and torch alike.
SWITCH_INTERVAL_S = 1e-4


DTYPE = "bfloat16"


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


if __name__ == "__main__":
    main()
