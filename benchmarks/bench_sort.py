"""Sorting (issue 19) against torch and cupy in the same run, on whatever backend gpukit picks:

- sort and argsort of 2^26 float32 keys (gpukit.sort / torch.sort, which also returns indices /
  cupy.sort), the GB/s by the fewest bytes an LSD radix sort moves (the histogram's read, then each
  pass reading and writing every key and index once);
- unique of 2^26 float32 with about 2^20 distinct values, and with index, inverse and counts;
- searchsorted of 2^24 queries into 2^20 sorted float32;
- the device-to-device copy bandwidth (a 1 GiB copy, read + write) as the limit column.

Prints a table and writes the figures as JSON (default bench_sort.json; `--json PATH`).
"""

import argparse

import numpy as np
from _common import json_path, median_seconds, peers, write_json

import gpukit as gk
from gpukit.runtime import sort_plan as _sort_plan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=json_path("bench_sort"))
    ap.add_argument("--log2n", type=int, default=26, help="keys sorted (2^26 for the issue)")
    args = ap.parse_args()
    n = 1 << args.log2n
    size = f"2^{args.log2n}"
    print(gk.info())
    torch, cupy = peers()
    rng = np.random.default_rng()
    host = rng.standard_normal(n).astype(np.float32)
    dup = rng.integers(0, 1 << 20, n).astype(np.float32)
    table = np.sort(rng.standard_normal(1 << 20).astype(np.float32))
    queries = rng.standard_normal(1 << 24).astype(np.float32)
    sync = gk.synchronize
    x, xd = gk.asarray(host), gk.asarray(dup)
    a, q = gk.asarray(table), gk.asarray(queries)
    floor_sort = _sort_plan.floor_bytes(n, 4, False)
    floor_argsort = _sort_plan.floor_bytes(n, 4, True, keys=False)
    work = {
        "copy 1 GiB (read+write)": (2 << 30, None),
        f"sort f32 {size}": (floor_sort, lambda: gk.sort(x)),
        f"argsort f32 {size}": (floor_argsort, lambda: gk.argsort(x)),
        f"unique f32 {size} (2^20 distinct)": (n * 4, lambda: gk.unique(xd)),
        "unique + index, inverse, counts": (n * 4, lambda: gk.unique(xd, True, True, True)),
        "searchsorted 2^24 in 2^20": (len(queries) * 12, lambda: gk.searchsorted(a, q)),
    }
    big = gk.ones((1 << 28,), "float32")
    work["copy 1 GiB (read+write)"] = (2 << 30, lambda: big.copy())
    ours = {name: median_seconds(fn, sync, 10, 2) for name, (_, fn) in work.items()}
    theirs = {}
    if torch is not None:
        tx, txd = torch.from_numpy(host).cuda(), torch.from_numpy(dup).cuda()
        ta, tq = torch.from_numpy(table).cuda(), torch.from_numpy(queries).cuda()
        tbig = torch.ones(1 << 28, device="cuda")
        fns = {
            "copy 1 GiB (read+write)": lambda: tbig.clone(),
            f"sort f32 {size}": lambda: torch.sort(tx),
            f"argsort f32 {size}": lambda: torch.argsort(tx, stable=True),
            f"unique f32 {size} (2^20 distinct)": lambda: torch.unique(txd),
            "unique + index, inverse, counts": lambda: torch.unique(
                txd, return_inverse=True, return_counts=True
            ),
            "searchsorted 2^24 in 2^20": lambda: torch.searchsorted(ta, tq),
        }
        theirs["torch"] = {
            k: median_seconds(f, torch.cuda.synchronize, 10, 2) for k, f in fns.items()
        }
    if cupy is not None:
        cx, cxd = cupy.asarray(host), cupy.asarray(dup)
        ca, cq = cupy.asarray(table), cupy.asarray(queries)
        cbig = cupy.ones(1 << 28, dtype=cupy.float32)
        csync = cupy.cuda.Device().synchronize
        fns = {
            "copy 1 GiB (read+write)": lambda: cbig.copy(),
            f"sort f32 {size}": lambda: cupy.sort(cx),
            f"argsort f32 {size}": lambda: cupy.argsort(cx),
            f"unique f32 {size} (2^20 distinct)": lambda: cupy.unique(cxd),
            "unique + index, inverse, counts": lambda: cupy.unique(
                cxd, return_index=True, return_inverse=True, return_counts=True
            ),
            "searchsorted 2^24 in 2^20": lambda: cupy.searchsorted(ca, cq),
        }
        theirs["cupy"] = {k: median_seconds(f, csync, 10, 2) for k, f in fns.items()}
    limit = work["copy 1 GiB (read+write)"][0] / ours["copy 1 GiB (read+write)"] / 1e9
    rows = []
    print(f"\nbackend: {gk.backend()}; copy limit {limit:.0f} GB/s (gpukit's copy)")
    head = f"{'work':34s} {'gpukit ms':>10s} {'GB/s':>7s} {'torch ms':>9s} {'cupy ms':>9s}"
    print(head + f" {'x torch':>8s} {'x cupy':>7s}")
    for name, (nbytes, _) in work.items():
        t = ours[name]
        row = {"work": name, "gpukit_ms": t * 1e3, "gpukit_GBps": nbytes / t / 1e9}
        cells = [f"{name:34s} {t * 1e3:10.3f} {nbytes / t / 1e9:7.0f}"]
        for peer in ("torch", "cupy"):
            p = theirs.get(peer, {}).get(name)
            row[f"{peer}_ms"] = None if p is None else p * 1e3
            cells.append(f"{'' if p is None else f'{p * 1e3:.3f}':>9s}")
        for peer in ("torch", "cupy"):
            p = theirs.get(peer, {}).get(name)
            row[f"vs_{peer}"] = None if p is None else p / t  # above 1: gpukit faster
            cells.append(f"{'' if p is None else f'{p / t:.2f}':>7s}")
        rows.append(row)
        print(" ".join(cells))
    write_json(
        args.json, {"info": gk.info(), "backend": gk.backend(), "copy_GBps": limit, "rows": rows}
    )


if __name__ == "__main__":
    main()
