"""Device time of each kernel of one blocked Cholesky (n = 4096 by default) under ncu, summed by
kernel name: run as
  ncu --profile-from-start off --metrics gpu__time_duration.sum --csv \
      --log-file OUT/ncu.csv python3 chol_ncu.py
then `python3 chol_ncu.py OUT/ncu.csv` prints the table. The profiled range (cuProfilerStart /
Stop) holds one call per dtype, after a warm-up call that compiles the kernels."""

import csv
import ctypes
import os
import sys
from collections import defaultdict

import numpy as np


def run() -> None:
    import gpukit as gk

    cuda = ctypes.CDLL("libcuda.so.1")
    n = int(os.environ.get("N", 4096))
    rng = np.random.default_rng(0)
    g = rng.standard_normal((n, n))
    for dt in ("float32", "float64"):
        x = gk.asarray((g @ g.T / n + np.eye(n)).astype(dt))
        gk.linalg.cholesky(x).to_numpy()
        cuda.cuProfilerStart()
        gk.linalg.cholesky(x).to_numpy()
        cuda.cuProfilerStop()


def summarize(path: str) -> None:
    total, count = defaultdict(float), defaultdict(int)
    with open(path) as f:
        rows = [r for r in f if r.startswith('"')]
    for row in csv.DictReader(rows):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = row["Metric Unit"]
        scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3}[unit]
        name = row["Kernel Name"].split("(")[0]
        total[name] += float(row["Metric Value"].replace(",", "")) * scale
        count[name] += 1
    print(f"{'kernel':40s} {'launches':>8s} {'us total':>10s} {'us each':>9s}")
    for name in sorted(total, key=total.get, reverse=True):
        print(f"{name:40s} {count[name]:8d} {total[name]:10.1f} {total[name] / count[name]:9.1f}")
    print(f"{'all (both dtypes)':40s} {sum(count.values()):8d} {sum(total.values()):10.1f}")


if __name__ == "__main__":
    summarize(sys.argv[1]) if len(sys.argv) > 1 else run()
