"""Where the blocked factorizations' time goes: eager (events and wall) against a CUDA graph of
the same calls (the device work alone; the final host check patched out for the capture), and
the single steps of the blocked Cholesky, the QR and LU panels and a Jacobi sweep timed alone.
Run after scripts/gpu_machine.sh installed gpukit: PYTHONPATH=/tmp/gpukit-site python3
notes/linalg_probe.py (N=256 for a quick run on the CPU backend, whose steps it skips)."""

import json
import os
import time

import numpy as np

import gpukit as gk
from gpukit import decompositions as dec
from gpukit import linalg_steps as st
from gpukit.fused_products import product

rng = np.random.default_rng(0)
res = {}


def dev_ms(fn, reps=20):
    """Device ms per call of fn: reps calls captured in a graph, the replay timed."""
    fn()
    gk.synchronize()
    g = gk.graph(lambda: [fn() for _ in range(reps)])
    g.replay()
    gk.synchronize()
    a = gk.Event().record()
    for _ in range(3):
        g.replay()
    b = gk.Event().record()
    b.synchronize()
    g.release()
    return a.elapsed_ms(b) / 3 / reps, None


def ev_ms(fn, reps=3):
    fn()
    gk.synchronize()
    a = gk.Event().record()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    b = gk.Event().record()
    b.synchronize()
    return a.elapsed_ms(b) / reps, (time.perf_counter() - t0) * 1e3 / reps


def graph_ms(fn, reps=5):
    saved = dec._check
    dec._check = lambda *a, **k: None
    try:
        g = gk.graph(fn)
    finally:
        dec._check = saved
    g.replay()
    gk.synchronize()
    a = gk.Event().record()
    for _ in range(reps):
        g.replay()
    b = gk.Event().record()
    b.synchronize()
    ms = a.elapsed_ms(b) / reps
    g.release()
    return ms


def spd(n):
    g = rng.standard_normal((n, n))
    return g @ g.T / n + np.eye(n)


n = int(os.environ.get("N", 4096))
cases = {
    "cholesky f32 4096": (lambda: gk.linalg.cholesky, gk.asarray(spd(n).astype("float32"))),
    "cholesky f64 4096": (lambda: gk.linalg.cholesky, gk.asarray(spd(n))),
    "qr f32 4096": (
        lambda: gk.linalg.qr,
        gk.asarray(rng.standard_normal((n, n)).astype("float32") + 64 * np.eye(n, dtype="float32")),
    ),
    "eigh f32 1024": (lambda: gk.linalg.eigh, gk.asarray(spd(n // 4).astype("float32"))),
    "svd f32 1024": (
        lambda: lambda a: gk.linalg.svd(a, full_matrices=False),
        gk.asarray(rng.standard_normal((n // 4, n // 4)).astype("float32")),
    ),
}
for name, (f, x) in cases.items():
    fn = f()
    try:
        dev, wall = ev_ms(lambda fn=fn, x=x: fn(x))
        res[name] = {"eager_event_ms": dev, "eager_wall_ms": wall}
        print(f"{name}: eager {dev:.2f} ms (wall {wall:.2f})", flush=True)
    except Exception as e:
        print(name, "eager failed", e)
        continue
    try:
        gm = graph_ms(lambda fn=fn, x=x: fn(x))
        res[name]["graph_ms"] = gm
        print(f"{name}: graph replay {gm:.2f} ms", flush=True)
    except Exception as e:
        print(f"{name}: capture failed: {type(e).__name__}: {str(e)[:200]}", flush=True)

# Cholesky steps alone (f32, n = 4096, nb = 64): the diagonal block, the panel product, the update.
nb = 64
a = gk.asarray(spd(n).astype("float32"))
blk = gk.ascontiguousarray(a[:nb, :nb].reshape(1, nb, nb))
d, _ = dev_ms(lambda: dec._cholesky(blk, False, True, False))
res["chol_small 64"] = d
print(f"chol_small 64x64 + inverse: {d * 1e3:.1f} us")
for m in (n - nb, n // 2, n // 8):
    t = gk.asarray(rng.standard_normal((1, m + nb, m + nb)).astype("float32"))
    lv = gk.asarray(rng.standard_normal((1, m, nb)).astype("float32"))
    inv = gk.asarray(rng.standard_normal((1, nb, nb)).astype("float32"))
    p1, _ = ev_ms(lambda t=t, inv=inv: t[:, nb:, :nb] @ inv, 20)
    p2, _ = ev_ms(
        lambda t=t, lv=lv: product(lv, gk.matrix_transpose(lv), residual=t[:, nb:, nb:]), 20
    )
    neg, _ = ev_ms(lambda lv=lv: gk.negative(lv), 20)
    res[f"panel m={m}"] = (p1, p2, neg)
    rate = 2 * m * m * nb / p2 / 1e9
    print(
        f"m={m}: panel product {p1 * 1e3:.1f} us, update {p2 * 1e3:.1f} us ({rate:.1f} "
        f"TFLOP/s), negative {neg * 1e3:.1f} us"
    )

# QR, LU and Jacobi steps alone (float32), each section on its own.


def qr_steps():
    for m in (n, n // 2):
        x = gk.asarray(rng.standard_normal((1, m, 32)).astype("float32"))
        outs = [((1, m, 32), x.dtype), ((1, 32, 32), x.dtype), ((1, 32, 32), x.dtype)]
        d, _ = dev_ms(lambda x=x, outs=outs: st.run("qr_panel", [x], outs), 5)
        res[f"qr_panel {m}x32"] = d
        print(f"qr_panel {m} x 32: {d * 1e3:.1f} us", flush=True)


def qr_update():
    v = gk.asarray(rng.standard_normal((1, n, 32)).astype("float32"))
    nt = gk.asarray(rng.standard_normal((1, 32, 32)).astype("float32"))
    rest = gk.asarray(rng.standard_normal((1, n, n - 32)).astype("float32"))
    d1, _ = ev_ms(lambda: gk.matrix_transpose(v) @ rest, 10)
    w1 = gk.matrix_transpose(v) @ rest
    d2, _ = ev_ms(lambda: gk.matrix_transpose(nt) @ w1, 10)
    w2 = gk.matrix_transpose(nt) @ w1
    d3, _ = ev_ms(lambda: product(v, w2, residual=rest), 10)
    res["qr update"] = (d1, d2, d3)
    print(
        f"qr trailing update at {n}: V^T C {d1 * 1e3:.1f} us, T^T W {d2 * 1e3:.1f} us, "
        f"C - V W {d3 * 1e3:.1f} us",
        flush=True,
    )


def lu_steps():
    t = gk.asarray(rng.standard_normal((1, n, n)).astype("float32"))
    piv, diag = gk.zeros((1, n), "int32"), gk.zeros((1, n), "float32")
    info, counter = gk.zeros((1,), "int32"), gk.zeros((1,), "uint32")
    d, _ = ev_ms(
        lambda: st.run(
            "lu_panel", [t.copy(), piv, diag, info, counter], [], (("k", 0), ("n", n), ("nb", 64))
        ),
        5,
    )
    dc, _ = ev_ms(lambda: t.copy(), 5)
    res["lu_panel"] = d - dc
    print(
        f"lu_panel {n} x 64: {(d - dc) * 1e3:.1f} us (copy {dc * 1e3:.1f} subtracted)", flush=True
    )
    d, _ = dev_ms(lambda: st.run("lu_trinv", [t], [((1, 64, 64), t.dtype)], (("upper", False),)))
    res["lu_trinv 64"] = d
    print(f"lu_trinv 64: {d * 1e3:.1f} us", flush=True)


def svj_sweep():
    k = n // 4
    xs = gk.asarray(rng.standard_normal((1, k, k)).astype("float32"))
    rr = gk.asarray(np.eye(k, dtype="float32")[None])

    negligible = gk.zeros((1,), "float32")  # no row set to zero: the sweep's full cost

    def sweep():
        st.run("svj", [xs, rr, negligible, gk.zeros((1,), "int32")], [], (("whole", False),))

    d, _ = ev_ms(sweep, 3)
    res[f"svj sweep {k}"] = d
    print(f"one Jacobi sweep, {k} rows of {k}: {d * 1e3:.1f} us", flush=True)


for f in (qr_steps, qr_update, lu_steps, svj_sweep):
    try:
        f()
    except Exception as e:
        print(f.__name__, "failed:", type(e).__name__, str(e)[:300], flush=True)
with open(os.path.join(os.environ.get("OUT", "."), "linalg_probe.json"), "w") as out:
    json.dump(res, out, indent=1)
