"""Decode A/B (issue 15, decode row; GPU machine, gpukit installed as scripts/gpu_machine.sh does):
the split-KV decode (kernels/attention_decode.cu + gk_attn_combine) in main's geometry and the
variants of notes/attention.md ("Decode bandwidth"), on bench_attention.py's decode shapes
(GQA 32/8, 8192 cached keys, head_dim 128, bfloat16, kv_length a device scalar), each step
captured in a graph (gpukit's; torch's CUDA graph of its SDPA beside, in the same process):

- b1, one cache replayed (33.5 MB: the 50 MB L2 may hold part of it);
- b1, ROTATE caches cycled (L2 holds none): the row of the target (>= 2.5 TB/s);
- b8, two caches cycled (268 MB each).

Every variant is first checked on each row's first cache against float64 (relative error <=
1e-2, the output's pool block poisoned with NaN first) and for the same bits over repeats.
Variants are swapped in by replacing the head dim's decode tiles
(kernels.ATTENTION_DECODE_TILES) and the split rule (attention_geometry.DECODE_SPLITS: "fill",
"wave" or a fixed count) and dropping cached plans; no reinstall. Prints a table of GB/s of
K + V and the ratio to torch; writes $OUT/decode_ab.json when OUT is set. Exits 1 if a variant
failed a check.

usage: PYTHONPATH=/tmp/gpukit-site python3 notes/decode_ab.py [--sweep] [variant names...]
(--sweep adds the wider set of tiles and split counts the default was chosen from.)
"""

import dataclasses
import json
import os
import sys
import time

import numpy as np

import gpukit as gk
import gpukit.array  # (the module, for its plan cache)
from gpukit import nn
from gpukit.runtime import kernels
from gpukit.runtime.cuda import attention_geometry as geometry

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from bench_attention import seconds_per_step, torch_graph

T = kernels.AttentionDecodeTiles
BF16 = np.dtype(gk.bfloat16)
HQ, HKV, SKV, D = 32, 8, 8192, 128
ROTATE = 8

# (name, d128 tiles (warps, keys per step, stages), split rule): the geometry before 2026-12-07
# first (4 warps of 4 stages, splits filling the SMs by the shared-memory estimate), then the
# shipped one (8 warps of 3 stages, one wave of splits), then single changes between the two.
# (The serial combine of before 2026-12-07 is gone from the kernel: the grouped one measured
# 0.25 us faster at 16 splits, notes/attention.md.)
VARIANTS = [
    ("main", T(4, 16, 4), "fill"),
    ("w8s3-wave", T(8, 16, 3), "wave"),
    ("w8s2-wave", T(8, 16, 2), "wave"),
    ("s4-wave", T(4, 16, 4), "wave"),
]
# The wider set of the 2026-12-07 sweep (notes/attention.md): more splits, 2-3 blocks an SM,
# wider steps, fewer warps.
SWEEP = [
    ("s3-wave", T(4, 16, 3), "wave"),
    ("s2-wave", T(4, 16, 2), "wave"),
    ("main-32", T(4, 16, 4), 32),
    ("s3-64", T(4, 16, 3), 64),
    ("s2-64", T(4, 16, 2), 64),
    ("k32s2-wave", T(4, 32, 2), "wave"),
    ("w2s4-wave", T(2, 16, 4), "wave"),
    ("w8s3-8", T(8, 16, 3), 8),
    ("w8s3-12", T(8, 16, 3), 12),
]
# (label, batch, caches cycled)
ROWS = [
    ("b1 one cache", 1, 1),
    (f"b1 {ROTATE} caches", 1, ROTATE),
    ("b8 two caches", 8, 2),
]


def use(tiles, rule):
    kernels.ATTENTION_DECODE_TILES[D] = tiles
    geometry.DECODE_SPLITS = rule
    sys.modules["gpukit.array"]._PLANS.clear()


def reference(q, k, v):
    """float64 attention of (b, hq, 1, d) q over (b, hkv, skv, d) k, v (GQA)."""
    b = q.shape[0]
    g = HQ // HKV
    qf = q.astype(np.float64).reshape(b, HKV, g, D)
    kf, vf = k.astype(np.float64), v.astype(np.float64)
    s = np.einsum("bhgd,bhkd->bhgk", qf, kf) / np.sqrt(D)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhgk,bhkd->bhgd", p, vf).reshape(b, HQ, 1, D)


def plan_of(b):
    p = geometry.decode("bf16", b, HQ, HKV, 1, SKV, D, "none", SMS, SHARED)
    return {"n_splits": p.n_splits, "keys_per_split": p.keys_per_split,
            "blocks": p.main.grid[0] * p.main.grid[1], "shared": p.main.shared}  # fmt: skip


def check(host, dev, length):
    """Relative error against float64 (output poisoned first) and same bits over 3 repeats."""
    want = reference(*host)
    outs = []
    for _ in range(3):
        poison = gk.full((host[0].shape[0], HQ, 1, D), np.nan, dtype=BF16)
        del poison  # its pool block is the next one handed out
        outs.append(nn.scaled_dot_product_attention(*dev, kv_length=length).to_numpy())
    got = outs[0].astype(np.float64)
    err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
    same = all(o.view(np.uint16).tobytes() == outs[0].view(np.uint16).tobytes() for o in outs)
    return err, bool(same and not np.isnan(got).any())


def main():
    global SMS, SHARED
    global SDPA
    import torch  # (here: notes/decode_sass.py imports the variants without it)

    SDPA = torch.nn.functional.scaled_dot_product_attention
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    variants = VARIANTS + (SWEEP if "--sweep" in sys.argv else [])
    if args:
        variants = [v for v in variants if v[0] in args or v[0] == "main"]
    print(gk.info())
    props = torch.cuda.get_device_properties(0)
    SMS = props.multi_processor_count
    SHARED = getattr(props, "shared_memory_per_block_optin", SHARED)
    print(props.name, SMS, "SMs", SHARED, "B shared per block")
    shipped, rule0 = kernels.ATTENTION_DECODE_TILES[D], geometry.DECODE_SPLITS
    rng = np.random.default_rng(0)
    length = gk.asarray(np.array(SKV, np.int32))
    results, failed = [], False
    t0 = time.perf_counter()
    for label, b, n_caches in ROWS:
        host = [
            tuple(rng.standard_normal(s, np.float32).astype(BF16)
                  for s in ((b, HQ, 1, D), (b, HKV, SKV, D), (b, HKV, SKV, D)))
            for _ in range(n_caches)
        ]  # fmt: skip
        kv_bytes = 2 * b * HKV * SKV * D * 2
        tdev = [tuple(torch.from_numpy(x.view(np.uint16).astype(np.int16)).cuda()
                      .view(torch.bfloat16) for x in c) for c in host]  # fmt: skip
        steps = [lambda c=c: SDPA(*c, enable_gqa=True) for c in tdev]
        theirs = seconds_per_step(steps, torch.cuda.synchronize, True,
                                  lambda fn: torch_graph(torch, fn))  # fmt: skip
        del steps
        tdev.clear()
        torch.cuda.empty_cache()
        torch_gbs = kv_bytes / theirs / 1e9
        dev = [tuple(gk.asarray(x) for x in c) for c in host]
        for name, tiles, rule in variants:
            use(tiles, rule)
            try:
                err, same = check(host[0], dev[0], length)
                steps = [lambda c=c: nn.scaled_dot_product_attention(*c, kv_length=length)
                         for c in dev]  # fmt: skip
                ours = seconds_per_step(steps, gk.synchronize, True, lambda fn: gk.graph(fn).replay)
                del steps
            except Exception as e:  # a variant that does not build or launch
                print(f"{label} {name}: {type(e).__name__}: {e}")
                failed = True
                results.append({"row": label, "variant": name, "error": str(e)})
                continue
            ok = err <= 1e-2 and same
            failed |= not ok
            gbs = kv_bytes / ours / 1e9
            results.append({
                "row": label, "variant": name, "tiles": dataclasses.astuple(tiles), "rule": rule,
                **plan_of(b), "us": ours * 1e6, "gbs": gbs, "torch_gbs": torch_gbs,
                "ratio": gbs / torch_gbs, "rel_err": err, "same_bits": same, "ok": ok,
            })  # fmt: skip
        dev.clear()
    use(shipped, rule0)
    print(f"\n{'row':16s} {'variant':12s} {'splits':>6s} {'blocks':>6s} {'us':>7s} "
          f"{'GB/s':>7s} {'torch':>7s} {'ratio':>6s} {'err':>8s} ok")  # fmt: skip
    for r in results:
        if "error" in r:
            print(f"{r['row']:16s} {r['variant']:12s} ERROR")
            continue
        print(f"{r['row']:16s} {r['variant']:12s} {r['n_splits']:6d} {r['blocks']:6d} "
              f"{r['us']:7.2f} {r['gbs']:7.0f} {r['torch_gbs']:7.0f} {r['ratio']:6.2f} "
              f"{r['rel_err']:8.1e} {'yes' if r['ok'] else 'NO'}")  # fmt: skip
    print(f"({time.perf_counter() - t0:.0f} s)")
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "decode_ab.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "info": gk.info(),
                       "rows": results}, f, indent=1)  # fmt: skip
    sys.exit(1 if failed else 0)


SMS, SHARED = 132, 227 * 1024
SDPA = None

if __name__ == "__main__":
    main()
