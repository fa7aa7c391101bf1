"""Matrix products (issue 13): every row of the issue's target table, gpukit beside torch (cuBLAS)
in the same run, with the ratio, the target, the kernel family gpukit took and the hardware limits
measured here (a device-to-device copy for bytes). Prints the table, writes JSON
(bench_matmul.json in $OUT or the working directory).

Times are the median of 5 CUDA-event timings, each over enough back-to-back calls to last a few
milliseconds; memory-bound rows alternate between two weights so that they come from HBM, not L2.
"""

import numpy as np
from _common import peers, write_json

import gpukit as gk


def events_ms(step, new_event, elapsed, sync, min_ms=3.0):
    """Median over 5 runs of the milliseconds per call of `step`, timed by events."""
    step()
    sync()
    a, b = new_event(), new_event()
    a.record()
    step()
    b.record()
    sync()
    reps = max(1, min(500, int(min_ms / max(elapsed(a, b), 1e-3))))
    times = []
    for _ in range(5):
        a.record()
        for _ in range(reps):
            step()
        b.record()
        sync()
        times.append(elapsed(a, b) / reps)
    return sorted(times)[2]


def gk_ms(step):
    return events_ms(step, gk.Event, lambda a, b: a.elapsed_ms(b), gk.synchronize)


def torch_ms(torch, step):
    return events_ms(
        step,
        lambda: torch.cuda.Event(enable_timing=True),
        lambda a, b: a.elapsed_time(b),
        torch.cuda.synchronize,
    )


def alternate(steps):
    state = [0]

    def step():
        steps[state[0]]()
        state[0] ^= 1

    return step


def host(rng, shape, dtype):
    return rng.standard_normal(shape, np.float32).astype(
        gk.bfloat16 if dtype == "bfloat16" else dtype
    )


def main():
    print(gk.info())
    if gk.backend() == "cpu":
        print("bench_matmul: no GPU backend, nothing to measure")
        return
    torch, _ = peers()
    rng = np.random.default_rng(0)
    rows = []

    def tdt(name):
        return getattr(torch, name) if torch else None

    def add(row, unit, ours_ms, theirs_ms, amount, target, path):
        """amount: flops (TFLOP/s) or bytes (GB/s) per call; unit "us" reports times."""
        scale = {"TFLOP/s": 1e12, "GB/s": 1e9}.get(unit)
        ours = amount / (ours_ms * 1e-3) / scale if scale else ours_ms * 1e3
        theirs = None
        if theirs_ms is not None:
            theirs = amount / (theirs_ms * 1e-3) / scale if scale else theirs_ms * 1e3
        ratio = None if theirs is None else (ours / theirs if scale else theirs / ours)
        rows.append(
            dict(
                row=row, unit=unit, gpukit=ours, torch=theirs, ratio=ratio, target=target, path=path
            )
        )

    def product(name, dtype, m, k, n, target, b_layout="row"):
        ha, hb = host(rng, (m, k), dtype), host(rng, (k, n), dtype)
        a = gk.asarray(ha)
        b = gk.asarray(hb) if b_layout == "row" else gk.asarray(np.ascontiguousarray(hb.T)).T
        ours = gk_ms(lambda: a @ b)
        theirs = None
        if torch:
            ta = torch.from_numpy(ha.astype(np.float32)).cuda().to(tdt(dtype))
            tb = torch.from_numpy(hb.astype(np.float32)).cuda().to(tdt(dtype))
            theirs = torch_ms(torch, lambda: ta @ tb)
        add(name, "TFLOP/s", ours, theirs, 2 * m * k * n, target, gk.linalg.matmul_path(a, b))
        return ours

    if torch:
        torch.backends.cuda.matmul.allow_tf32 = False
    product("bf16 8192^3", "bfloat16", 8192, 8192, 8192, ">= 0.95x")
    product("f16 8192^3", "float16", 8192, 8192, 8192, ">= 0.95x")
    product("bf16 4096^3", "bfloat16", 4096, 4096, 4096, ">= 0.9x")

    # linear 4096x4096 -> 11008, plain and with bias + gelu fused
    hx, hw = host(rng, (4096, 4096), "bfloat16"), host(rng, (11008, 4096), "bfloat16")
    hbias = host(rng, (11008,), "bfloat16")
    x, w, bias = gk.asarray(hx), gk.asarray(hw), gk.asarray(hbias)
    plain = gk_ms(lambda: gk.linear(x, w))
    fused = gk_ms(lambda: gk.linear(x, w, bias, "gelu"))
    t_plain = t_fused = None
    if torch:
        F = torch.nn.functional
        tx, tw, tb = (
            torch.from_numpy(v.astype(np.float32)).cuda().bfloat16() for v in (hx, hw, hbias)
        )
        t_plain = torch_ms(torch, lambda: F.linear(tx, tw))
        t_fused = torch_ms(torch, lambda: F.gelu(F.linear(tx, tw, tb)))
    flops = 2 * 4096 * 4096 * 11008
    path = gk.linalg.matmul_path(x, w.T)
    add("linear 4096x4096->11008", "TFLOP/s", plain, t_plain, flops, ">= 0.9x", path)
    add("fused linear+bias+gelu", "TFLOP/s", fused, t_fused, flops, "plain/fused >= 0.95", path)
    rows[-1]["plain_over_fused"] = plain / fused

    # batched 64 x (512x128 @ 128x512)
    ha, hb = host(rng, (64, 512, 128), "bfloat16"), host(rng, (64, 128, 512), "bfloat16")
    a, b = gk.asarray(ha), gk.asarray(hb)
    theirs = None
    if torch:
        ta, tb2 = (torch.from_numpy(v.astype(np.float32)).cuda().bfloat16() for v in (ha, hb))
        theirs = torch_ms(torch, lambda: ta @ tb2)
    add(
        "batched 64x(512x128@128x512)",
        "TFLOP/s",
        gk_ms(lambda: a @ b),
        theirs,
        2 * 64 * 512 * 512 * 128,
        ">= 0.9x",
        gk.linalg.matmul_path(a, b),
    )

    # bf16 2048^3: the QoS critical step, in microseconds
    ha, hb = host(rng, (2048, 2048), "bfloat16"), host(rng, (2048, 2048), "bfloat16")
    a, b = gk.asarray(ha), gk.asarray(hb)
    theirs = None
    if torch:
        ta, tb2 = (torch.from_numpy(v.astype(np.float32)).cuda().bfloat16() for v in (ha, hb))
        theirs = torch_ms(torch, lambda: ta @ tb2)
    add(
        "bf16 2048^3",
        "us",
        gk_ms(lambda: a @ b),
        theirs,
        0,
        "<= 30 us",
        gk.linalg.matmul_path(a, b),
    )

    product("f32 4096^3 (no TF32)", "float32", 4096, 4096, 4096, ">= 0.9x")
    product("f64 4096^3", "float64", 4096, 4096, 4096, "none set")
    product("f64 4032x64 @ 64x4032 (a Cholesky update)", "float64", 4032, 64, 4032, "none set")
    gk.linalg.allow_tf32 = True
    if torch:
        torch.backends.cuda.matmul.allow_tf32 = True
    product("tf32 8192^3, b N-major (copied)", "float32", 8192, 8192, 8192, ">= 0.9x")
    product("tf32 8192^3, b K-major", "float32", 8192, 8192, 8192, ">= 0.9x", b_layout="col")
    gk.linalg.allow_tf32 = False
    if torch:
        torch.backends.cuda.matmul.allow_tf32 = False

    # decode: 1 x 4096 -> 11008 bf16, both weight layouts, weights alternating (HBM, not L2)
    hx = host(rng, (1, 4096), "bfloat16")
    x = gk.asarray(hx)
    for layout in ("linear", "x@W"):
        shape = (11008, 4096) if layout == "linear" else (4096, 11008)
        hws = [host(rng, shape, "bfloat16") for _ in range(2)]
        ws = [gk.asarray(h) for h in hws]
        if layout == "linear":
            ours = gk_ms(alternate([lambda w=w: gk.linear(x, w) for w in ws]))
            path = gk.linalg.matmul_path(x, ws[0].T)
        else:
            ours = gk_ms(alternate([lambda w=w: x @ w for w in ws]))
            path = gk.linalg.matmul_path(x, ws[0])
        theirs = None
        if torch:
            tx = torch.from_numpy(hx.astype(np.float32)).cuda().bfloat16()
            tws = [torch.from_numpy(h.astype(np.float32)).cuda().bfloat16() for h in hws]
            if layout == "linear":
                step = alternate(
                    [lambda w=w, tx=tx: torch.nn.functional.linear(tx, w) for w in tws]
                )
            else:
                step = alternate([lambda w=w, tx=tx: tx @ w for w in tws])
            theirs = torch_ms(torch, step)
        add(
            f"decode {layout} 1x4096->11008",
            "GB/s",
            ours,
            theirs,
            11008 * 4096 * 2,
            ">= 1.0x, >= 2500 GB/s",
            path,
        )

    # the byte limit: a device-to-device copy (read + write)
    src = gk.ones((2**28,), "float32")
    copy = gk_ms(lambda: src.copy())
    limit = 2 * 2**28 * 4 / (copy * 1e-3) / 1e9

    width = max(len(r["row"]) for r in rows)
    print(f"\nbackend: {gk.backend()}; device copy {limit:.0f} GB/s (read + write)")
    print(
        f"{'product':{width}s} {'unit':>7s} {'gpukit':>9s} {'torch':>9s} {'ratio':>7s} "
        f"{'target':>22s}  path"
    )
    for r in rows:
        theirs = "" if r["torch"] is None else f"{r['torch']:.1f}"
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.3f}"
        if "plain_over_fused" in r:
            ratio = f"{r['plain_over_fused']:.3f}"
        print(
            f"{r['row']:{width}s} {r['unit']:>7s} {r['gpukit']:9.1f} {theirs:>9s} "
            f"{ratio:>7s} {r['target']:>22s}  {r['path']}"
        )
    write_json(
        "bench_matmul", {"device": gk.info().get("device"), "copy_GBps": limit, "rows": rows}
    )


if __name__ == "__main__":
    main()
