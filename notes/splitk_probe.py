"""Exact float32 products with few output tiles and a long K (split over blocks) and qr float32,
gpukit beside torch with TF32 off, one process; a table, and splitk_probe.json in $OUT. Run on
the GPU machine from notes/."""

import json
import os

import numpy as np
import torch
from probe_timing import best_ms

import gpukit as gk

torch.backends.cuda.matmul.allow_tf32 = False
SHAPES = [(32, 4096, 4064, True), (128, 4096, 3968, True), (768, 4096, 768, False),
          (128, 2048, 96, True), (2048, 2048, 2048, False), (4096, 128, 4096, False)]  # fmt: skip


def product_row(rng, m, k, n, a_transposed):
    ha = rng.standard_normal((k, m) if a_transposed else (m, k)).astype(np.float32)
    hb = rng.standard_normal((k, n)).astype(np.float32)
    a, b = gk.asarray(ha), gk.asarray(hb)
    ta, tb = torch.from_numpy(ha).cuda(), torch.from_numpy(hb).cuda()
    if a_transposed:
        a, ta, ha = a.T, ta.T, ha.T
    g = best_ms(lambda: a @ b, 20)
    t = best_ms(lambda: ta @ tb, 20, torch.cuda.synchronize)
    err = np.abs((a @ b).to_numpy().astype(np.float64) - ha.astype(np.float64) @ hb).max()
    name = f"matmul f32 {m}x{k}x{n}{' aT' if a_transposed else ''}"
    return name, g, t, 2 * m * n * k / 1e9 / g, err


def qr_row(rng, n):
    h = rng.standard_normal((n, n)).astype(np.float32)
    a, ta = gk.asarray(h), torch.from_numpy(h).cuda()
    reps = 3 if n == 4096 else 10
    g = best_ms(lambda: gk.linalg.qr(a), reps)
    t = best_ms(lambda: torch.linalg.qr(ta), reps, torch.cuda.synchronize)
    q, r = gk.linalg.qr(a)
    res = np.linalg.norm(q.to_numpy().astype(np.float64) @ r.to_numpy() - h) / np.linalg.norm(h)
    return f"qr f32 n={n}", g, t, 0.0, res


rng = np.random.default_rng(1)
rows = [product_row(rng, *s) for s in SHAPES] + [qr_row(rng, n) for n in (1024, 4096)]
print(f"{'work':36s} {'gpukit ms':>10s} {'torch ms':>10s} {'x torch':>8s} {'TF/s':>7s} {'err':>9s}")
for name, g, t, tf, err in rows:
    print(f"{name:36s} {g:10.3f} {t:10.3f} {t / g:8.2f} {tf:7.1f} {err:9.2e}")
with open(os.path.join(os.environ.get("OUT", "."), "splitk_probe.json"), "w") as f:
    json.dump(rows, f)
