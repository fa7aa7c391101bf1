"""The Cholesky leaf kernel (gk_chol_small, 2026-11-28 third session) on the GPU machine: checked
against NumPy in float64 (n = 64 with -L^-T, float32 and float64; stacks of 512 small matrices),
then device time per launch as a CUDA graph of 10 calls between events (probe_timing.graph_ms),
and the blocked Cholesky of n = 4096 it serves (graph and eager) beside torch. Run from notes/
after scripts/gpu_machine.sh installed gpukit: PYTHONPATH=/tmp/gpukit-site python3
chol_leaf_probe.py (OUT=dir also writes chol_leaf_probe.json there)."""

import json
import os

import numpy as np
from chol_probe import factorization
from probe_timing import graph_ms

import gpukit as gk
from gpukit import decompositions as dec

rng = np.random.default_rng(0)
res = {}


def spd(count, n):
    g = rng.standard_normal((count, n, n))
    return g @ np.swapaxes(g, -1, -2) / n + np.eye(n)


def check(host, dt, inverse):
    """Max relative errors of L (and -L^-T) against NumPy in float64; info must be all 0."""
    a = gk.asarray(host.astype(dt))
    made = dec._cholesky(a, False, inverse, False)
    info = made[-1].to_numpy()
    assert not info.any(), info
    ref = np.linalg.cholesky(host)
    err = {"L": float(np.abs(made[0].to_numpy() - ref).max() / np.abs(ref).max())}
    if inverse:
        r2 = -np.swapaxes(np.linalg.inv(ref), -1, -2)
        err["neg_inv_T"] = float(np.abs(made[1].to_numpy() - r2).max() / np.abs(r2).max())
    # a matrix that is not positive definite: info 1, NaN out
    bad = host.copy()
    bad[0] = -bad[0]
    made = dec._cholesky(gk.asarray(bad.astype(dt)), False, inverse, False)
    assert made[-1].to_numpy()[0] == 1 and np.isnan(made[0].to_numpy()[0]).all()
    return a, err


def per_launch_us(a, inverse):
    ms = graph_ms(lambda: [dec._cholesky(a, False, inverse, False) for _ in range(10)])
    return ms * 100  # 10 calls a replay, ms -> us


cases = [(1, 64, True), (1, 64, False), (1, 32, True), (512, 32, False), (512, 32, True)]
cases += [(512, 64, True), (512, 16, False), (512, 4, False), (65536, 8, False), (1, 48, True)]
for dt in ("float32", "float64"):
    for count, n, inverse in cases:
        host = spd(count, n)
        a, err = check(host, dt, inverse)
        us = per_launch_us(a, inverse)
        key = f"{dt} {count} x {n} x {n}{' + inverse' if inverse else ''}"
        res[key] = {"us": us, **err}
        errs = ", ".join(f"{k} {v:.1e}" for k, v in err.items())
        print(f"{key}: {us:.1f} us a launch ({errs})", flush=True)


n = int(os.environ.get("N", 4096))
for dt in ("float32", "float64"):
    res[f"cholesky {dt} {n}"] = factorization(dt, n)

out = os.environ.get("OUT")
if out:
    with open(os.path.join(out, "chol_leaf_probe.json"), "w") as f:
        json.dump(res, f, indent=1)
