"""qr float32 at n = 1024 and 4096: eager device time (events) and wall time per call, and the
device time of a CUDA graph of the same call; then the same with one panel a block (the order
before 2026-11-28's blocks of four panels). Run on the GPU machine from notes/."""

import numpy as np
from probe_timing import eager_ms, graph_ms

import gpukit as gk
from gpukit import orthogonal


def report(label: str) -> None:
    rng = np.random.default_rng(0)
    for n in (1024, 4096):
        a = gk.asarray(rng.standard_normal((n, n)).astype(np.float32))
        ev, wall = eager_ms(lambda a=a: gk.linalg.qr(a))
        replay = graph_ms(lambda a=a: gk.linalg.qr(a))
        print(f"{label}qr n={n}: eager events {ev:.2f} ms, wall {wall:.2f} ms, "
              f"graph replay {replay:.2f} ms", flush=True)  # fmt: skip


report("")
orthogonal._PANELS_PER_BLOCK = 1
report("one panel a block: ")
