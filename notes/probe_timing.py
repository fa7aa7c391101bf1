"""Timing helpers of the lead's probes on the GPU machine (gpukit and torch in one process)."""

import time

import gpukit as gk


def best_ms(fn, reps: int, sync=gk.synchronize) -> float:
    """Wall-clock ms per call of fn: best of three runs of reps calls, each ending in sync."""
    fn()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e3


def eager_ms(fn, reps: int = 3) -> tuple[float, float]:
    """(device ms between events, wall ms) per eager call of fn."""
    fn()
    gk.synchronize()
    a = gk.Event().record()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    b = gk.Event().record()
    b.synchronize()
    return a.elapsed_ms(b) / reps, (time.perf_counter() - t0) * 1e3 / reps


def device_ms(fn, reps: int = 10) -> float:
    """Device ms per eager call of fn (eager_ms's first figure), to 4 decimals."""
    return round(eager_ms(fn, reps)[0], 4)


def graph_ms(fn, reps: int = 3) -> float:
    """Device ms per replay of a CUDA graph captured from one call of fn."""
    g = gk.graph(fn)
    g.replay()
    gk.synchronize()
    a = gk.Event().record()
    for _ in range(reps):
        g.replay()
    b = gk.Event().record()
    b.synchronize()
    g.release()
    return a.elapsed_ms(b) / reps
