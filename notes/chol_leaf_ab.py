"""gk_chol_small against another source of kernels/linalg_small.cu (VARIANT=path; none: the
installed one), each in its own process: per-launch device time of the 64 x 64 and 32 x 32
factors with -L^-T (graphs of 10 launches), the blocked Cholesky of 4096 (graph and eager),
and a digest of every output, so that two runs' bits can be compared. Run from the repository
root after scripts/gpu_machine.sh installed gpukit:
PYTHONPATH=/tmp/gpukit-site VARIANT=old.cu python3 notes/chol_leaf_ab.py
LEAVES (default "2,1"): the values of the define GK_LA_CHOL_LEAF timed in this one process, in
turn (2: the [A; I] leaf with the 64-row copies in and out, 1: it with the generic ones, 0: the
32 + 32 one; the plans are dropped between them), and torch's cholesky of the same matrix after
them when torch is importable."""

import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_timing import eager_ms, graph_ms

import gpukit as gk
from gpukit import decompositions as dec
from gpukit.array import _PLANS
from gpukit.runtime import jit, kernels

variant = os.environ.get("VARIANT")
if variant:
    sources = dict(jit.builtin_sources())
    with open(variant) as f:
        sources["linalg_small.cu"] = f.read()
    jit._SOURCES = sources


def digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a.to_numpy()).tobytes())
    return h.hexdigest()[:12]


rng = np.random.default_rng(0)
n = 4096
g = rng.standard_normal((n, n))
spd = g @ g.T / n + np.eye(n)
ref = np.linalg.cholesky(spd)
leaves = [int(v) for v in os.environ.get("LEAVES", "2,1").split(",")]
shipped_defines = kernels.linalg_small


def with_leaf(leaf):
    """kernels.linalg_small's instances with GK_LA_CHOL_LEAF=leaf; every cached plan dropped."""
    kernels.linalg_small = lambda dtype: (
        shipped_defines(dtype)[0],
        (*shipped_defines(dtype)[1], f"GK_LA_CHOL_LEAF={leaf}"),
    )
    _PLANS.clear()


def run_leaf(dt):
    a = gk.asarray(spd.astype(dt))
    for m in (64, 32):
        blk = gk.ascontiguousarray(a[:m, :m].reshape(1, m, m))
        us = graph_ms(lambda blk=blk: [dec._cholesky(blk, False, True, False) for _ in range(10)])
        l11, neg, _ = dec._cholesky(blk, False, True, False)
        lr = np.linalg.cholesky(spd[:m, :m])
        e1 = float(np.abs(l11.to_numpy()[0] - lr).max())
        e2 = float(np.abs(neg.to_numpy()[0] + np.linalg.inv(lr).T).max())
        print(f"  {dt} leaf {m} + inverse: {us * 100:.1f} us a launch, err L {e1:.1e}, "
              f"-L^-T {e2:.1e}, bits {digest(l11, neg)}")  # fmt: skip
    saved = dec._check
    dec._check = lambda *a, **k: None  # the final read of info back: no capture past it
    try:
        gm = graph_ms(lambda a=a: gk.linalg.cholesky(a), 5)
    finally:
        dec._check = saved
    dev, wall = eager_ms(lambda a=a: gk.linalg.cholesky(a), 5)
    lo = gk.linalg.cholesky(a)
    err = float(np.abs(lo.to_numpy() - ref).max())
    print(f"  {dt} cholesky {n}: graph {gm:.3f} ms, eager {dev:.3f} (wall {wall:.3f}), "
          f"max err {err:.1e}, bits {digest(lo)}", flush=True)  # fmt: skip


print(f"variant {variant or 'installed'}")
for leaf in leaves:
    with_leaf(leaf)
    print(f"GK_LA_CHOL_LEAF={leaf}")
    for dt in ("float32", "float64"):
        run_leaf(dt)
try:
    import torch
except ImportError:
    torch = None
if torch is not None and torch.cuda.is_available():
    from probe_timing import best_ms

    for dt in ("float32", "float64"):
        t = torch.tensor(spd.astype(dt), device="cuda")
        ms = best_ms(lambda t=t: torch.linalg.cholesky(t), 5, torch.cuda.synchronize)
        print(f"torch {dt} cholesky {n}: {ms:.3f} ms (wall, synchronized)", flush=True)
