"""Linear algebra (issue 20) against torch.linalg (cuSOLVER) and cupy.linalg in the same run:

- cholesky and solve (one right-hand side), float32 and float64, n = 4096;
- qr (reduced), float32, n = 4096;
- eigh and svd, float32, n = 1024, and a batch of 512 matrices of 32 x 32;
- the limit column: gpukit's own float32 and float64 products of the same n (a blocked
  factorization spends its flops in them), as TFLOP/s.

Rates are by the conventional flop counts (cholesky n^3/3, LU 2n^3/3, Householder QR 4n^3/3,
eigh with vectors 9n^3, svd with vectors 21n^3); inputs are built so that each op succeeds (SPD
for cholesky, well-conditioned for solve). An op that gpukit does not run on this backend
prints "n/a" with the reason. Prints a table and writes the figures as JSON to
$OUT/bench_linalg.json when OUT is set, else bench_linalg.json (`--json PATH` overrides);
`--scale 0.25` shrinks every n (a quick run on the CPU backend); `--only cholesky solve` runs
those ops only.
"""

import argparse

import numpy as np
from _common import json_path, median_seconds, peers, write_json

import gpukit as gk


def _spd(rng, n, batch=()):
    g = rng.standard_normal((*batch, n, n))
    return g @ np.swapaxes(g, -1, -2) / n + np.eye(n)


def workloads(rng, scale: float):
    """name -> (flops, dtype, host inputs, op name)."""
    big, mid = max(int(4096 * scale), 8), max(int(1024 * scale), 8)
    batch = max(int(512 * scale), 1)
    spd = _spd(rng, big)
    gen = rng.standard_normal((big, big)) + big**0.5 * np.eye(big)
    rhs = rng.standard_normal((big, 1))
    sym = _spd(rng, mid)
    sq = rng.standard_normal((mid, mid))
    small_sym = _spd(rng, 32, (batch,))
    small = rng.standard_normal((batch, 32, 32))
    out = {}
    for dt in ("float32", "float64"):
        out[f"cholesky {dt} n={big}"] = (big**3 / 3, dt, (spd,), "cholesky")
        out[f"solve {dt} n={big}"] = (2 * big**3 / 3, dt, (gen, rhs), "solve")
    out[f"qr float32 n={big}"] = (4 * big**3 / 3, "float32", (gen,), "qr")
    out[f"eigh float32 n={mid}"] = (9 * mid**3, "float32", (sym,), "eigh")
    out[f"svd float32 n={mid}"] = (21 * mid**3, "float32", (sq,), "svd")
    out[f"eigh float32 {batch}x32x32"] = (batch * 9 * 32**3, "float32", (small_sym,), "eigh")
    out[f"svd float32 {batch}x32x32"] = (batch * 21 * 32**3, "float32", (small,), "svd")
    return out, big


OPS = ("cholesky", "solve", "qr", "eigh", "svd")


def _op(linalg, op):
    """`op` of a library's linalg namespace (gpukit's, torch's and CuPy's take the same call)."""
    return {
        "cholesky": linalg.cholesky,
        "solve": linalg.solve,
        "qr": linalg.qr,
        "eigh": linalg.eigh,
        "svd": lambda a: linalg.svd(a, full_matrices=False),
    }[op]


def time_gpukit(work):
    out = {}
    for name, (_, dt, host, op) in work.items():
        args = [gk.asarray(h.astype(dt)) for h in host]
        fn = _op(gk.linalg, op)
        try:
            out[name] = median_seconds(lambda fn=fn, args=args: fn(*args), gk.synchronize, 5)
        except NotImplementedError as e:
            out[name] = f"n/a ({str(e).split(';')[0]})"
    return out


def time_peer(mod, work, to_device, sync):
    out = {}
    for name, (_, dt, host, op) in work.items():
        args = [to_device(h.astype(dt)) for h in host]
        fn = _op(mod.linalg, op)
        out[name] = median_seconds(lambda fn=fn, args=args: fn(*args), sync, 5)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=json_path("bench_linalg"))
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every n (1: the issue's)")
    ap.add_argument("--only", nargs="+", choices=OPS, help="these ops only (default: all)")
    args = ap.parse_args()
    print(gk.info())
    rng = np.random.default_rng(0)
    work, big = workloads(rng, args.scale)
    if args.only:
        work = {name: w for name, w in work.items() if w[3] in args.only}
    limits = {}
    for dt in ("float32", "float64"):
        x = gk.asarray(rng.standard_normal((big, big)).astype(dt))
        t = median_seconds(lambda x=x: x @ x, gk.synchronize, 5)
        limits[dt] = 2 * big**3 / t / 1e12
    ours = time_gpukit(work)
    torch, cupy = peers()
    theirs = {}
    if torch is not None:
        theirs["torch"] = time_peer(
            torch, work, lambda h: torch.from_numpy(h).cuda(), torch.cuda.synchronize
        )
    if cupy is not None:
        theirs["cupy"] = time_peer(cupy, work, cupy.asarray, cupy.cuda.Device().synchronize)
    print(
        f"\nbackend: {gk.backend()}; gpukit matmul n={big}: float32 {limits['float32']:.1f}, "
        f"float64 {limits['float64']:.1f} TFLOP/s (the limit of a blocked factorization)"
    )
    print(
        f"{'work':28s} {'gpukit ms':>10s} {'TFLOP/s':>8s} {'torch ms':>9s} {'cupy ms':>9s}"
        f" {'x torch':>8s} {'x cupy':>7s}"
    )
    rows = []
    for name, (flops, dt, _, _) in work.items():
        t = ours[name]
        row = {"work": name, "flops": flops, "limit_TFLOPs": limits[dt]}
        if isinstance(t, str):
            row["gpukit"] = t
            cells = [f"{name:28s} {'n/a':>10s} {'':>8s}"]
        else:
            row.update(gpukit_ms=t * 1e3, gpukit_TFLOPs=flops / t / 1e12)
            cells = [f"{name:28s} {t * 1e3:10.3f} {flops / t / 1e12:8.2f}"]
        for peer in ("torch", "cupy"):
            p = theirs.get(peer, {}).get(name)
            row[f"{peer}_ms"] = None if p is None else p * 1e3
            cells.append(f"{'' if p is None else f'{p * 1e3:.3f}':>9s}")
        for peer in ("torch", "cupy"):
            p = theirs.get(peer, {}).get(name)
            ratio = None if p is None or isinstance(t, str) else p / t  # above 1: gpukit faster
            row[f"vs_{peer}"] = ratio
            cells.append(f"{'' if ratio is None else f'{ratio:.2f}':>7s}")
        rows.append(row)
        print(" ".join(cells) + (f"  {t}" if isinstance(t, str) else ""))
    info = {"info": gk.info(), "backend": gk.backend(), "matmul_TFLOPs": limits}
    write_json(args.json, {**info, "rows": rows})


if __name__ == "__main__":
    main()
