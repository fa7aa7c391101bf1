"""The memory pool (issue 4), against torch and cupy in the same run:

- alloc + free of a 1 MiB array from Python (gpukit.empty / torch.empty / cupy.empty), and of the
  bare pool buffer; the same from 8 threads at once (wall time of the whole run over all calls);
- oversubscription: evictable arrays worth 1.5x the pool limit, each touched in least recently
  used order (the worst case: every touch spills one array and restores another).
"""

import threading
import time

import numpy as np
from _common import per_op_us, print_table, write_rows

import gpukit as gk
from gpukit.runtime import devices

MiB = 1 << 20


def oversubscription(limit_bytes, array_bytes):
    gk.memory.empty_cache()
    gk.memory.set_limit(limit_bytes)
    count = int(1.5 * limit_bytes) // array_bytes
    rng = np.random.default_rng()
    host = rng.standard_normal(array_bytes // 4).astype(np.float32)
    arrays = []
    for _ in range(count):
        a = gk.asarray(host)
        a.evictable = True
        arrays.append(a)
    gk.synchronize()
    before = gk.memory.stats()
    start = time.perf_counter()
    for a in arrays:  # oldest first: each one was spilled by the ones after it
        b = a * 1
        del b
    gk.synchronize()
    elapsed = time.perf_counter() - start
    after = gk.memory.stats()
    restores = after["restores"] - before["restores"]
    ok = all(np.array_equal(a.to_numpy(), host) for a in arrays[:2])
    del arrays
    gk.memory.set_limit(None)
    gk.memory.empty_cache()
    return count, restores, elapsed, ok


def threaded_us(step, threads=8, iters=20000):
    """`step` called `iters` times on each of `threads` threads started together: wall time of
    the whole run per call, in microseconds (best of 3)."""
    best = float("inf")
    for _ in range(3):
        barrier = threading.Barrier(threads + 1)

        def work(barrier=barrier):
            barrier.wait()
            for _ in range(iters):
                step()

        workers = [threading.Thread(target=work) for _ in range(threads)]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        best = min(best, (time.perf_counter() - start) / (threads * iters) * 1e6)
    return best


def main():
    print(gk.info())
    rows = []
    n = MiB // 4
    ours = per_op_us(lambda: gk.empty((n,), "float32"))
    pool = devices.runtime().pool
    stream = devices.runtime().stream
    bare = per_op_us(lambda: pool.allocate(MiB, stream))
    ours8 = threaded_us(lambda: gk.empty((n,), "float32"))
    bare8 = threaded_us(lambda: pool.allocate(MiB, stream))
    torch_us = cupy_us = torch8 = cupy8 = None
    try:
        import torch

        torch.empty(n, device="cuda")
        torch_us = per_op_us(lambda: torch.empty(n, device="cuda"))
        torch8 = threaded_us(lambda: torch.empty(n, device="cuda"))
    except Exception as e:  # torch is only there to compare against
        print("torch unavailable:", e)
    try:
        import cupy

        cupy_us = per_op_us(lambda: cupy.empty(n, dtype=cupy.float32))
        cupy8 = threaded_us(lambda: cupy.empty(n, dtype=cupy.float32))
    except Exception as e:
        print("cupy unavailable:", e)
    rows.append(("alloc + free, 1 MiB array (us)", ours, torch_us, cupy_us))
    rows.append(("  bare pool buffer alloc + free, 1 MiB (us)", bare, None, None))
    rows.append(("alloc + free, 1 MiB array, 8 threads at once (us)", ours8, torch8, cupy8))
    rows.append(("  bare pool buffer, 8 threads at once (us)", bare8, None, None))

    limit = 4 << 30 if gk.backend() == "cuda" else 64 * MiB
    size = 256 * MiB if gk.backend() == "cuda" else 4 * MiB
    count, restores, elapsed, ok = oversubscription(limit, size)
    moved = restores * size * 2  # each restore follows a spill of the same size
    rows.append(
        (
            f"oversubscribed 1.5x: {count} x {size // MiB} MiB touched, spill+restore (GB/s)",
            moved / elapsed / 1e9,
            None,
            None,
        )
    )
    rows.append(("  restores during that pass / data intact", float(restores), None, None))
    print("data intact after spilling:", ok)

    print_table(gk.backend(), rows)
    write_rows("bench_memory", gk.backend(), rows)


if __name__ == "__main__":
    main()
