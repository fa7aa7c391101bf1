"""GIL handoffs beside a waking thread (issue 17, version 5; CPU only).

A critical thread runs "requests": a raise (a byte written to a pipe), then K short native calls
that give up the GIL (`_core.wait_guaranteed_idle()` with no task: a py.detach that returns at
once), each after ~2 us of Python. A second thread plays the best-effort flood: it waits without
the GIL (its launch on the GPU) until the raise, then runs a few microseconds of Python (the
read-back's check, the relaunch loop) and goes back to waiting without the GIL. Modes:
  alone     - no second thread
  wakes     - the flood thread wakes at the raise and takes the GIL for its Python
  fused     - the flood thread wakes at the raise but stays in native code (the read-back and
              the wait in one call: a C loop called through ctypes, without the GIL)
  keep      - as wakes, but the critical thread's K calls keep the GIL (no detach)
Prints p50/p99 of a request (us) per mode and the switch interval."""

import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from gpukit import _core

K = 8
PIN = os.environ.get("PIN", "1") != "0"
DEVNULL = os.open(os.devnull, os.O_WRONLY)
N = 3000


def py_work(n=40):
    s = 0
    for i in range(n):
        s += i
    return s


def request(detach=True, raised=False):
    t = time.perf_counter()
    if raised:
        os.write(WAKE_W, b"r")  # the raise (a syscall that gives up the GIL, in every mode)
    else:
        os.write(DEVNULL, b"r")
    for _ in range(K):
        py_work()
        if detach:
            _core.wait_guaranteed_idle()
        else:
            _core.preemptible()  # a native call that keeps the GIL
    return time.perf_counter() - t


# The raise: a byte written to a pipe at the request's start; the flood thread's yielding launch
# "ends" when it reads it.
WAKE_R, WAKE_W = os.pipe()
_FUSED_C = r"""
#include <unistd.h>
/* The fused flood: wakes on each byte and goes back to waiting, never returning to Python (as
   the read-back, the check and the wait for idle in one call without the GIL). */
void flood_fused(int fd) {
    char c;
    while (read(fd, &c, 1) == 1 && c != 'q') {}
}
"""


def fused_lib():
    d = tempfile.mkdtemp()
    src, lib = os.path.join(d, "f.c"), os.path.join(d, "f.so")
    with open(src, "w") as f:
        f.write(_FUSED_C)
    subprocess.check_call(["cc", "-O2", "-shared", "-fPIC", src, "-o", lib])
    return ctypes.CDLL(lib)  # ctypes releases the GIL for the whole call


def pin(cpu):
    """Pins the calling thread (Linux: pid 0 is the calling thread) when PIN is set, so that
    the flood thread's wakeups do not take the critical thread's core on a small machine."""
    if PIN and hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[cpu % len(cpus)]})


def flood(stop, mode):
    pin(1)
    if mode == "fused":
        fused_lib().flood_fused(WAKE_R)
        return
    while True:
        c = os.read(WAKE_R, 1)  # its yielding launch, waited on without the GIL
        if c == b"q":
            return
        py_work(150)  # with the GIL: the read-back's check, the loop (~5 us), then the wait
        _core.wait_guaranteed_idle()


def run(mode, interval):
    sys.setswitchinterval(interval)
    stop = threading.Event()
    th = None
    if mode != "alone":
        th = threading.Thread(target=flood, args=(stop, mode))
        th.start()
    xs = []
    pin(0)
    end_spin = time.perf_counter()
    for _ in range(N):
        end_spin += 3e-4
        while time.perf_counter() < end_spin:
            pass  # hold the GIL between requests (a busy service thread)
        xs.append(request(detach=(mode != "keep"), raised=(mode != "alone")))
    stop.set()
    if th:
        os.write(WAKE_W, b"q")
        th.join()
    xs.sort()
    return xs[len(xs) // 2] * 1e6, xs[int(len(xs) * 0.99)] * 1e6, statistics.mean(xs) * 1e6


if __name__ == "__main__":
    for interval in (5e-3, 1e-4):
        for mode in ("alone", "wakes", "fused", "keep"):
            p50, p99, mean = run(mode, interval)
            print(
                f"switch {interval * 1e6:6.0f} us  {mode:6s}  request of {K} detach points: "
                f"p50 {p50:7.1f}  p99 {p99:7.1f}  mean {mean:7.1f} us"
            )


def releases(calls, label, rounds=200):
    """How many of `rounds` runs of calls() let a spinning Python thread run (it can only run
    when the calling thread gives the GIL up: the switch interval is set far beyond the run).
    A release shorter than the waiter's wakeup is seldom seen (the caller takes the GIL back
    first); under a short switch interval (bench_sched's 100 us) the waiter's forced switch then
    comes at the caller's next eval check instead."""
    sys.setswitchinterval(1.0)
    seen, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            seen[0] += 1

    th = threading.Thread(target=spin)
    th.start()
    time.sleep(0.01)  # the spinner waits for the GIL from here on
    ran = 0
    for _ in range(rounds):
        before = seen[0]
        calls()
        ran += seen[0] != before
    stop.set()
    th.join()
    print(f"{label}: the other thread ran during {ran} of {rounds} calls")


def gil_checks():
    """Which of the guaranteed side's native calls give the GIL up (CPU pool, no task running
    on the flood's side)."""
    from gpukit import _native

    pool = _core.Pool(_native.host_allocator_table())
    sched = _core.Scheduler(pool, 1 << 30)

    def task():
        t = sched.submit("critical", "guaranteed", 1 << 20, 1 << 20, inline=True)
        sched.finish(t)

    releases(task, "guaranteed task entered (inline, admitted at once) and finished")
    releases(_core.wait_guaranteed_idle, "wait_guaranteed_idle (a detach of ~0 us)")
    releases(lambda: time.sleep(1e-4), "time.sleep(100 us) (the GIL given up long enough)", 3)


if __name__ == "__main__" and os.environ.get("GIL_CHECKS", "1") != "0":
    gil_checks()
