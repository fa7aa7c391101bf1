"""Timing and reporting shared by the benchmarks."""

import json
import os
import time


def per_op_us(step, sync=lambda: None, iters=20000):
    """Best of 5 runs of `iters` calls of `step` (then `sync`), in microseconds per call."""
    for _ in range(500):
        step()
    sync()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(iters):
            step()
        sync()
        best = min(best, (time.perf_counter() - start) / iters * 1e6)
    return best


def print_table(backend: str, rows) -> None:
    """rows: (measure, gpukit, torch, cupy) with None where there is no figure."""

    def fmt(v):
        return "" if v is None else f"{v:10.3f}"

    width = max(len(r[0]) for r in rows)
    print(f"\nbackend: {backend}")
    print(f"{'measure':{width}s} {'gpukit':>10s} {'torch':>10s} {'cupy':>10s}")
    for name, ours, torch_v, cupy_v in rows:
        print(f"{name:{width}s} {fmt(ours):>10s} {fmt(torch_v):>10s} {fmt(cupy_v):>10s}")


def json_path(name: str) -> str:
    """Where a benchmark writes its figures: $OUT/<name>.json when OUT is set, else here."""
    return os.path.join(os.environ.get("OUT", "."), f"{name}.json")


def write_json(name: str, payload) -> str:
    """The figures as JSON at json_path(name) (name may be a path ending in .json); returns the
    path."""
    path = name if name.endswith(".json") else json_path(name)
    with open(path, "w") as f:
        json.dump(payload, f, indent=1, default=str)
    print(f"wrote {path}")
    return path


def write_rows(name: str, backend: str, rows) -> str:
    """print_table's rows as JSON records."""
    keys = ("measure", "gpukit", "torch", "cupy")
    records = [dict(zip(keys, r, strict=True)) for r in rows]
    return write_json(name, {"backend": backend, "rows": records})


def peers():
    """[torch, cupy]: each module where it is installed and sees a GPU, else None (they are
    only there to compare against)."""
    found = []
    for name in ("torch", "cupy"):
        try:
            mod = __import__(name)
            if name == "torch":
                ok = mod.cuda.is_available()
            else:
                ok = mod.cuda.runtime.getDeviceCount() > 0
            found.append(mod if ok else None)
        except Exception as e:  # absent, or without a GPU
            print(f"{name} unavailable: {e}")
            found.append(None)
    return found


def time_ms(run, record, elapsed, sync, reps=10, rounds=3):
    """Median over `rounds` of the mean milliseconds of `reps` calls of run() between events
    made by record() (each event has synchronize(); elapsed(a, b) reads two of them)."""
    run()
    run()
    sync()
    times = []
    for _ in range(rounds):
        a = record()
        for _ in range(reps):
            run()
        b = record()
        b.synchronize()
        times.append(elapsed(a, b) / reps)
    times.sort()
    return times[len(times) // 2]


def median_seconds(step, sync, reps, warmups=1):
    """Median of `reps` timed calls of step() (each followed by sync()) after `warmups` calls."""
    for _ in range(warmups):
        step()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]
