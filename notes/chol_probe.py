"""The blocked Cholesky on the GPU machine: eager (events and wall) and a CUDA graph's replay of
one call, beside torch.linalg.cholesky in the same process, then its steps alone (the diagonal
block's kernel, the panel product, the trailing update). Run from notes/ after
scripts/gpu_machine.sh installed gpukit: PYTHONPATH=/tmp/gpukit-site python3 chol_probe.py."""

import json
import os
import sys

import numpy as np
from probe_timing import eager_ms, graph_ms

import gpukit as gk
from gpukit import decompositions as dec
from gpukit.fused_products import product

rng = np.random.default_rng(0)


def spd(n, dtype):
    g = rng.standard_normal((n, n))
    return (g @ g.T / n + np.eye(n)).astype(dtype)


def torch_ms(x):
    import torch

    t = torch.as_tensor(x, device="cuda")
    torch.linalg.cholesky(t)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(5):
        torch.linalg.cholesky(t)
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 5


def factorization(dt: str, n: int) -> dict:
    """cholesky of an n x n matrix of dtype dt: eager (device and wall ms), a graph's replay and
    torch's call, printed and returned with the factor's relative residual."""
    host = spd(n, dt)
    x = gk.asarray(host)
    lo = gk.linalg.cholesky(x).to_numpy().astype(np.float64)
    err = float(np.abs(lo @ lo.T - host).max() / np.abs(host).max())
    dev, wall = eager_ms(lambda: gk.linalg.cholesky(x), 5)
    saved = dec._check
    dec._check = lambda *a, **k: None  # the final read of info back: no capture past it
    try:
        gm = graph_ms(lambda: gk.linalg.cholesky(x), 5)
    finally:
        dec._check = saved
    tm = torch_ms(host)
    print(
        f"cholesky {dt} {n}: eager {dev:.2f} ms (wall {wall:.2f}), graph {gm:.2f}, torch {tm:.2f}"
        f" ({tm / wall:.2f}x by wall), |LL^T - A|/|A| {err:.1e}",
        flush=True,
    )
    return {"eager_ms": dev, "wall_ms": wall, "graph_ms": gm, "torch_ms": tm, "err": err}


def steps(n: int) -> None:
    """The diagonal block's kernel, the panel product and the trailing update, each alone."""
    nb = 64
    for dt in ("float32", "float64"):
        a = gk.asarray(spd(n, dt))
        blk = gk.ascontiguousarray(a[:nb, :nb].reshape(1, nb, nb))
        d = graph_ms(lambda blk=blk: [dec._cholesky(blk, False, True, False) for _ in range(10)])
        print(f"{dt} diagonal block 64 + inverse: {d * 100:.1f} us", flush=True)
        for m in (n - nb, n // 2, n // 8):
            t = gk.asarray(rng.standard_normal((1, m + nb, m + nb)).astype(dt))
            lv = gk.asarray(rng.standard_normal((1, m, nb)).astype(dt))
            inv = gk.asarray(rng.standard_normal((1, nb, nb)).astype(dt))
            p1 = graph_ms(lambda t=t, inv=inv: [t[:, nb:, :nb] @ inv for _ in range(10)]) / 10
            p2 = graph_ms(lambda t=t, lv=lv: [product(lv, gk.matrix_transpose(lv),
                          residual=t[:, nb:, nb:]) for _ in range(10)]) / 10  # fmt: skip
            rate = 2 * m * m * nb / p2 / 1e9
            print(
                f"{dt} m={m}: panel product {p1 * 1e3:.1f} us, update {p2 * 1e3:.1f} us "
                f"({rate:.1f} TFLOP/s)",
                flush=True,
            )


if __name__ == "__main__":
    n = int(os.environ.get("N", 4096))
    res = {f"cholesky {dt}": factorization(dt, n) for dt in ("float32", "float64")}
    if len(sys.argv) > 1 and sys.argv[1] == "steps":
        steps(n)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "chol_probe.json"), "w") as f:
            json.dump(res, f, indent=1)
