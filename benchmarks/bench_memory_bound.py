"""Memory-bound work (issue 14) beside torch and cupy in the same run, with the device-to-device
copy bandwidth measured in that run as the limit: reductions (whole array, inner and outer axes,
argmax, var), cumsum, the row kernels (softmax, log_softmax, layer_norm, rms_norm and its fused
residual form), the transposing copy, and elementwise ops.

GB/s counts the fewest bytes each op must move: every input read once, every output written
once. Each figure is the median of 3 rounds of the mean time of 10 back-to-back calls between
events. Prints a table (GB/s; ratio to the better of torch and cupy; share of the copy) and writes
JSON (--json, default bench_memory_bound.json in $OUT or here). Needs the CUDA backend, torch
and (optionally) cupy; the inputs are shared through DLPack, so all three read the same memory.
"""

import argparse
import math

from _common import json_path, time_ms, write_json

import gpukit as gk
from gpukit import nn

N = 256 * 2**20  # float32 elements of the large 1-D inputs (1 GiB)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=json_path("bench_memory_bound"))
    args = ap.parse_args()
    if gk.backend() != "cuda":
        raise SystemExit(f"bench_memory_bound needs the cuda backend (found {gk.backend()})")
    import torch

    try:
        import cupy as cp
        import cupyx.scipy.special as cps
    except ImportError:
        cp = cps = None
    F = torch.nn.functional

    def torch_event():
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def torch_elapsed(a, b):
        b.synchronize()
        return a.elapsed_time(b)

    def gk_event():
        return gk.Event().record()

    def gk_elapsed(a, b):
        b.synchronize()
        return a.elapsed_ms(b)

    def t_torch(fn):
        return time_ms(fn, torch_event, torch_elapsed, torch.cuda.synchronize)

    def t_gk(fn):
        return time_ms(fn, gk_event, gk_elapsed, gk.synchronize)

    def t_cupy(fn):
        def record():
            e = cp.cuda.Event()
            e.record()
            return e

        def elapsed(a, b):
            b.synchronize()
            return cp.cuda.get_elapsed_time(a, b)

        return time_ms(fn, record, elapsed, cp.cuda.Device().synchronize)

    print(gk.info())
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    dst = torch.empty_like(x)
    copy_ms = t_torch(lambda: dst.copy_(x))
    copy_gbs = 2 * N * 4 / copy_ms / 1e6
    gx, gy = gk.from_dlpack(x), gk.from_dlpack(y)
    cx = cp.from_dlpack(x) if cp else None
    cy = cp.from_dlpack(y) if cp else None
    m = x[: 8192 * 8192].view(8192, 8192)
    gm, cm = gk.from_dlpack(m), (cp.from_dlpack(m) if cp else None)
    rows = []

    def add(name, nbytes, ours, theirs=None, cupys=None):
        figures = {"gpukit": t_gk(ours)}
        figures["torch"] = t_torch(theirs) if theirs else None
        figures["cupy"] = t_cupy(cupys) if (cupys and cp) else None
        gbs = {k: (nbytes / v / 1e6 if v else None) for k, v in figures.items()}
        peers = [v for k, v in gbs.items() if k != "gpukit" and v]
        row = {"work": name, "bytes": nbytes, "ms": figures, "gbs": gbs, "copy_gbs": copy_gbs}
        row["vs_best_peer"] = gbs["gpukit"] / max(peers) if peers else None
        row["of_copy"] = gbs["gpukit"] / copy_gbs
        rows.append(row)

    add("a.sum() f32 256M", N * 4, lambda: gk.sum(gx), lambda: x.sum(), lambda: cx.sum())
    add(
        "sum(axis=0) f32 8192^2",
        m.numel() * 4,
        lambda: gm.sum(axis=0),
        lambda: m.sum(0),
        lambda: cm.sum(axis=0),
    )
    add(
        "sum(axis=1) f32 8192^2",
        m.numel() * 4,
        lambda: gm.sum(axis=1),
        lambda: m.sum(1),
        lambda: cm.sum(axis=1),
    )
    add("argmax f32 256M", N * 4, lambda: gk.argmax(gx), lambda: x.argmax(), lambda: cx.argmax())
    add("var f32 256M", N * 4, lambda: gk.var(gx), lambda: x.var(unbiased=False), lambda: cx.var())
    add(
        "cumsum f32 256M",
        2 * N * 4,
        lambda: gk.cumsum(gx),
        lambda: x.cumsum(0),
        lambda: cp.cumsum(cx),
    )

    s = x[: 4096 * 16384].view(4096, 16384)
    gs, cs = gk.from_dlpack(s), (cp.from_dlpack(s) if cp else None)
    add(
        "softmax f32 4096x16384",
        2 * s.numel() * 4,
        lambda: nn.softmax(gs),
        lambda: torch.softmax(s, -1),
        lambda: cps.softmax(cs, axis=-1),
    )
    add(
        "log_softmax f32 4096x16384",
        2 * s.numel() * 4,
        lambda: nn.log_softmax(gs),
        lambda: torch.log_softmax(s, -1),
        lambda: cps.log_softmax(cs, axis=-1),
    )

    h = torch.randn(16384, 4096, device="cuda").to(torch.bfloat16)
    r = torch.randn(16384, 4096, device="cuda").to(torch.bfloat16)
    w = (1 + 0.1 * torch.randn(4096, device="cuda")).to(torch.bfloat16)
    b = torch.randn(4096, device="cuda").to(torch.bfloat16)
    gh, gr, gw, gb = (gk.from_dlpack(t) for t in (h, r, w, b))
    nb = 2 * h.numel() * 2
    add(
        "layer_norm bf16 16384x4096",
        nb,
        lambda: nn.layer_norm(gh, gw, gb),
        lambda: F.layer_norm(h, (4096,), w, b),
    )
    add(
        "rms_norm bf16 16384x4096",
        nb,
        lambda: nn.rms_norm(gh, gw, 1e-6),
        lambda: F.rms_norm(h, (4096,), w, 1e-6),
    )

    def torch_add_rms():
        s = h + r
        return F.rms_norm(s, (4096,), w, 1e-6), s

    add(
        "rms_norm(residual=) bf16 16384x4096",
        2 * nb,
        lambda: nn.rms_norm(gh, gw, 1e-6, residual=gr),
        torch_add_rms,
    )

    add(
        "ascontiguousarray(a.T) f32 8192^2",
        2 * m.numel() * 4,
        lambda: gk.ascontiguousarray(gm.T),
        lambda: m.t().contiguous(),
        lambda: cp.ascontiguousarray(cm.T),
    )
    g16 = h.view(-1)[: 64 * 2**20]
    gg = gk.from_dlpack(g16)
    for again in ("", ", again"):  # twice: the spread of the rows nearest the 0.95 line
        add(f"gelu bf16 64M{again}", 2 * g16.numel() * 2, lambda: nn.gelu(gg), lambda: F.gelu(g16))
        add(f"add f32 256M{again}", 3 * N * 4, lambda: gx + gy, lambda: x + y, lambda: cx + cy)
        add(f"exp f32 256M{again}", 2 * N * 4, lambda: gk.exp(gx), lambda: x.exp(),
            lambda: cp.exp(cx))  # fmt: skip

    def fmt(v, spec="8.0f"):
        return f"{v:{spec}}" if v is not None and not math.isnan(v) else " " * 8

    print(f"\ndevice-to-device copy: {copy_gbs:.0f} GB/s (read + write), the limit column")
    width = max(len(r["work"]) for r in rows)
    print(f"{'work (GB/s)':{width}s}   gpukit    torch     cupy  vs best  of copy")
    for r in rows:
        g = r["gbs"]
        print(
            f"{r['work']:{width}s} {fmt(g['gpukit'])} {fmt(g['torch'])} {fmt(g['cupy'])}"
            f"  {fmt(r['vs_best_peer'], '6.3f')}  {fmt(100 * r['of_copy'], '6.1f')}%"
        )
    write_json(args.json, {"device": gk.info(), "copy_gbs": copy_gbs, "rows": rows})


if __name__ == "__main__":
    main()
