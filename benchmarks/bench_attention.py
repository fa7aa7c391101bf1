"""scaled_dot_product_attention throughput (issue 15), against torch's SDPA in the same run:

- prefill: TFLOP/s (4 b h s^2 d, halved when causal) for bfloat16 causal and full at batch 4,
  32 heads, 2048 tokens, head_dim 128, and float16 head_dim 64 (32 heads) and 256 (8 heads) at
  4096 tokens;
- decode: one query per head against 8192 cached keys, 32 query heads on 8 kv heads, head_dim
  128, bfloat16: GB/s of K and V read (the bytes each step must read), with the cache length
  also given on the device (kv_length). Several caches rotate so that the 50 MB L2 cannot hold
  them. The "graph" rows time the device work alone: one step per cache captured into a graph
  (gpukit's and torch's CUDA graph), replayed; the other rows call from Python each step.

Prints a table (gpukit, torch, ratio) and writes the rows as JSON (--json PATH, default
bench_attention.json in $OUT or the working directory).
"""

import argparse
import time

import numpy as np
from _common import json_path, peers, write_json

import gpukit as gk
from gpukit import nn

PREFILL = [
    # (label, dtype, batch, heads, seq, head_dim, causal)
    ("bf16 causal b4 h32 s2048 d128", "bfloat16", 4, 32, 2048, 128, True),
    ("bf16 full b4 h32 s2048 d128", "bfloat16", 4, 32, 2048, 128, False),
    ("f16 full b4 h32 s4096 d64", "float16", 4, 32, 4096, 64, False),
    ("f16 causal b4 h32 s4096 d64", "float16", 4, 32, 4096, 64, True),
    ("f16 full b4 h8 s4096 d256", "float16", 4, 8, 4096, 256, False),
    ("f16 causal b4 h8 s4096 d256", "float16", 4, 8, 4096, 256, True),
]
DECODE = [
    # (label, batch, q heads, kv heads, cached keys, head_dim, kv_length on the device, graph)
    ("decode b1 GQA 32/8 8192 keys d128", 1, 32, 8, 8192, 128, False, False),
    ("decode b1 GQA 32/8 8192 keys d128 kv_length", 1, 32, 8, 8192, 128, True, False),
    ("decode b8 GQA 32/8 8192 keys d128", 8, 32, 8, 8192, 128, False, False),
    ("decode b1 GQA 32/8 8192 keys d128 kv_length, graph", 1, 32, 8, 8192, 128, True, True),
    ("decode b8 GQA 32/8 8192 keys d128 kv_length, graph", 8, 32, 8, 8192, 128, True, True),
]
ROTATE = 8  # KV caches cycled through by the decode timings


def seconds_per_call(step, sync, budget=0.3):
    """Best of 3 timed runs of `step`, each about `budget` / 3 seconds, after a warm-up."""
    step()
    sync()
    start = time.perf_counter()
    step()
    sync()
    once = max(time.perf_counter() - start, 1e-6)
    iters = int(min(5000, max(3, budget / 3 / once)))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(iters):
            step()
        sync()
        best = min(best, (time.perf_counter() - start) / iters)
    return best


def prefill_flops(b, h, s, d, causal):
    f = 4.0 * b * h * s * s * d
    return f / 2 if causal else f


def bench_prefill(torch, rng, row):
    label, dtype, b, h, s, d, causal = row
    host = [rng.standard_normal((b, h, s, d), np.float32) for _ in range(3)]
    np_dtype = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    q, k, v = (gk.asarray(x.astype(np_dtype)) for x in host)
    ours = seconds_per_call(
        lambda: nn.scaled_dot_product_attention(q, k, v, is_causal=causal), gk.synchronize
    )
    theirs = None
    if torch:
        tq, tk, tv = (torch.from_numpy(x).cuda().to(getattr(torch, dtype)) for x in host)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        theirs = seconds_per_call(
            lambda: sdpa(tq, tk, tv, is_causal=causal), torch.cuda.synchronize
        )
        del tq, tk, tv
    fl = prefill_flops(b, h, s, d, causal)
    return label, "TFLOP/s", fl / ours / 1e12, None if theirs is None else fl / theirs / 1e12


def decode_caches(rng, b, hq, hkv, skv, d):
    """ROTATE (q, k, v) sets of float32 host arrays."""
    caches = []
    for _ in range(ROTATE):
        q = rng.standard_normal((b, hq, 1, d), np.float32)
        k = rng.standard_normal((b, hkv, skv, d), np.float32)
        v = rng.standard_normal((b, hkv, skv, d), np.float32)
        caches.append((q, k, v))
    return caches


def seconds_per_step(steps, sync, captured, graph):
    """Seconds per decode step: steps[i]() runs the step on cache i; eager, each step called in
    turn; captured, all of them captured by graph(fn) once and the replays timed."""
    if not captured:
        it = [0]

        def step():
            steps[it[0] % len(steps)]()
            it[0] += 1

        return seconds_per_call(step, sync)
    for s in steps:  # compiled and planned outside the capture
        s()
    sync()
    replay = graph(lambda: [s() for s in steps])
    return seconds_per_call(replay, sync) / len(steps)


def torch_graph(torch, fn):
    """fn captured into a torch CUDA graph (warmed up on a side stream, as torch asks); its
    replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def bench_decode(torch, rng, row):
    label, b, hq, hkv, skv, d, device_length, captured = row
    bf16 = np.dtype(gk.bfloat16)
    caches = decode_caches(rng, b, hq, hkv, skv, d)
    dev = [tuple(gk.asarray(x.astype(bf16)) for x in c) for c in caches]
    length = gk.asarray(np.array(skv, np.int32)) if device_length else None
    sdpa_gk = nn.scaled_dot_product_attention
    steps = [lambda c=c: sdpa_gk(*c, kv_length=length) for c in dev]

    def gk_graph(fn):
        return gk.graph(fn).replay

    ours = seconds_per_step(steps, gk.synchronize, captured, gk_graph)
    del steps
    dev.clear()  # frees the caches before torch's
    theirs = None
    if torch:
        tdev = [tuple(torch.from_numpy(x).cuda().bfloat16() for x in c) for c in caches]
        sdpa = torch.nn.functional.scaled_dot_product_attention
        steps = [lambda c=c: sdpa(*c, enable_gqa=True) for c in tdev]
        theirs = seconds_per_step(
            steps, torch.cuda.synchronize, captured, lambda fn: torch_graph(torch, fn)
        )
        del steps
        tdev.clear()
    kv_bytes = 2 * b * hkv * skv * d * 2
    return (
        label,
        "GB/s of K+V",
        kv_bytes / ours / 1e9,
        None if not theirs else kv_bytes / theirs / 1e9,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=json_path("bench_attention"))
    ap.add_argument("--rows", choices=["all", "prefill", "decode", "graph"], default="all")
    args = ap.parse_args()
    print(gk.info())
    if gk.backend() == "cpu":
        print("bench_attention: no GPU backend, nothing to measure")
        return
    torch, _ = peers()
    rng = np.random.default_rng(0)
    width = max(len(r[0]) for r in PREFILL + DECODE)
    print(f"\nbackend: {gk.backend()}")
    print(f"{'case':{width}s} {'unit':>12s} {'gpukit':>9s} {'torch':>9s} {'gk/torch':>9s}")
    out = []
    # Each row is printed as soon as it is measured (a run cut short keeps what it measured).
    cases = [(bench_prefill, r) for r in PREFILL if args.rows in ("all", "prefill")]
    cases += [
        (bench_decode, r)
        for r in DECODE
        if args.rows in ("all", "decode") or (args.rows == "graph" and r[-1])
    ]
    for bench, case in cases:
        label, unit, ours, theirs = bench(torch, rng, case)
        ratio = None if theirs is None else ours / theirs
        cells = [f"{ours:9.1f}", "" if theirs is None else f"{theirs:9.1f}"]
        cells.append("" if ratio is None else f"{ratio:9.2f}")
        print(f"{label:{width}s} {unit:>12s} " + " ".join(f"{c:>9s}" for c in cells), flush=True)
        out.append({"case": label, "unit": unit, "gpukit": ours, "torch": theirs, "ratio": ratio})
    write_json(args.json, {"backend": gk.backend(), "info": gk.info(), "rows": out})


if __name__ == "__main__":
    main()
