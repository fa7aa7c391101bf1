"""How much of the blocked LU's eager time is the host's: slogdet and solve of n = 4096, float32
and float64, eager (median wall time with a final synchronize, as bench_linalg) against a CUDA
graph's replay of slogdet (device time between events: the same launches without Python), then
a cProfile of eager float32 solves (the functions that take the host's time). Run after
scripts/gpu_machine.sh installed gpukit: PYTHONPATH=/tmp/gpukit-site python3
notes/lu_host_probe.py"""

import cProfile
import json
import pstats
import sys
from pathlib import Path

import numpy as np

import gpukit as gk

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _common import median_seconds
from probe_timing import graph_ms

n = 4096
rng = np.random.default_rng(0)
a64 = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
b64 = rng.standard_normal((n, 1))
for dt in ("float32", "float64"):
    a, b = gk.asarray(a64.astype(dt)), gk.asarray(b64.astype(dt))
    row = {"dtype": dt}
    for name, fn in (("slogdet", lambda a=a: gk.linalg.slogdet(a)),
                     ("solve", lambda a=a, b=b: gk.linalg.solve(a, b))):  # fmt: skip
        row[f"{name} eager ms"] = median_seconds(fn, gk.synchronize, 5) * 1e3
    row["slogdet graph ms"] = graph_ms(lambda a=a: gk.linalg.slogdet(a), 5)
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}))
a, b = gk.asarray(a64.astype("float32")), gk.asarray(b64.astype("float32"))
prof = cProfile.Profile()
prof.enable()
for _ in range(3):
    gk.linalg.solve(a, b)
gk.synchronize()
prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(18)
