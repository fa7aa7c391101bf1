"""The blocked LU's panel in one thread-block cluster, its rows in registers (gk_lu_panel_regs) or
in shared memory (gk_lu_panel_cluster), and in one cooperative launch, against the launch per
column: one panel of m x 64 alone (device time: reps eager calls between events), then solve
(one right-hand side), inv and det at n = 4096, float32 and float64, eager (median wall time
with a final synchronize, as bench_linalg), with each of the one-launch panels (the plans
rebuilt without the others), torch.linalg beside. Run after
scripts/gpu_machine.sh installed gpukit: PYTHONPATH=/tmp/gpukit-site python3
notes/lu_panel_probe.py (N=512 for a quick run). Prints lines of JSON."""

import json
import os
import sys
from pathlib import Path

import numpy as np

import gpukit as gk
import gpukit.array  # the module (gk.array is the function): its plan cache
from gpukit import linalg_steps as st
from gpukit.runtime.cuda import linalg_lu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _common import median_seconds
from probe_timing import device_ms

rng = np.random.default_rng(0)
n = int(os.environ.get("N", 4096))
NB = 64


def out(**kw):
    print(json.dumps(kw), flush=True)


# One panel of m x 64 (the trailing matrix m x m), device time.
for dt in ("float32", "float64"):
    for m in (n, n // 2):
        t = gk.asarray(rng.standard_normal((1, m, m)).astype(dt))
        piv = gk.zeros((1, m), dtype="int32")
        diag = gk.zeros((1, m), dtype=dt)
        info = gk.zeros((1,), dtype="int32")
        counter = gk.zeros((1,), dtype="uint32")
        args = [t, piv, diag, info, counter]
        for path in ("regs", "cluster", "cooperative", "column"):
            opts = (("k", 0), ("n", m), ("nb", NB), ("cooperative", path != "column"),
                    ("cluster", path in ("regs", "cluster")), ("regs", path == "regs"))  # fmt: skip
            ms = device_ms(lambda o=opts, x=args: st.run("lu_panel", x, [], o))
            out(what="panel", dtype=dt, m=m, path=path, ms=round(ms, 4))

# solve / inv / det, eager wall time; torch beside.
try:
    import torch

    torch_ok = torch.cuda.is_available()
except Exception:  # no torch here
    torch_ok = False
a64 = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
b64 = rng.standard_normal((n, 1))
saved = linalg_lu._cooperative, linalg_lu._cluster
none = lambda *args, **kw: None  # noqa: E731
for dt in ("float32", "float64"):
    a, b = gk.asarray(a64.astype(dt)), gk.asarray(b64.astype(dt))
    ops = {
        "solve": lambda a=a, b=b: gk.linalg.solve(a, b),
        "inv": lambda a=a: gk.linalg.inv(a),
        "det": lambda a=a: gk.linalg.slogdet(a),
    }
    x = gk.linalg.solve(a, b).to_numpy().astype(np.float64)
    res = np.linalg.norm(a64 @ x - b64) / (np.linalg.norm(a64) * np.linalg.norm(x))
    out(what="solve residual", dtype=dt, scaled=float(res / np.finfo(dt).eps / n))
    for path in ("regs", "cluster", "cooperative"):
        linalg_lu._cooperative = saved[0]
        smem = lambda *args, **kw: saved[1](*args, **{**kw, "regs": False})  # noqa: E731
        linalg_lu._cluster = {"regs": saved[1], "cluster": smem, "cooperative": none}[path]
        sys.modules["gpukit.array"]._PLANS.clear()
        for name, fn in ops.items():
            ms = round(median_seconds(fn, gk.synchronize, 5) * 1e3, 3)
            out(what=name, dtype=dt, n=n, path=path, ms=ms)
    linalg_lu._cooperative, linalg_lu._cluster = saved
    sys.modules["gpukit.array"]._PLANS.clear()
    if torch_ok:
        ta = torch.tensor(a64.astype(dt), device="cuda")
        tb = torch.tensor(b64.astype(dt), device="cuda")
        tops = {
            "solve": lambda ta=ta, tb=tb: torch.linalg.solve(ta, tb),
            "inv": lambda ta=ta: torch.linalg.inv(ta),
            "det": lambda ta=ta: torch.linalg.slogdet(ta),
        }
        for name, fn in tops.items():
            ms = round(median_seconds(fn, torch.cuda.synchronize, 5) * 1e3, 3)
            out(what=name, dtype=dt, n=n, lib="torch", ms=ms)
