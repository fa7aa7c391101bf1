"""Device time of each launch group of one step of the blocked LU (decompositions._blocked_lu)
at trailing sizes m = 4096 and 2048, float32 and float64: the panel (with its interchanges on
the trailing columns), -inv(L11), the panel's copy, -U12 = -inv(L11) A12 and the trailing
update L21 (-U12) + A22 (reps eager calls between events). Run after scripts/gpu_machine.sh
installed gpukit: PYTHONPATH=/tmp/gpukit-site python3 notes/lu_step_probe.py"""

import json

import numpy as np
from probe_timing import device_ms

import gpukit as gk
from gpukit import linalg_steps as st
from gpukit.fused_products import product

rng = np.random.default_rng(0)
w = 64
for dt in ("float32", "float64"):
    for m in (4096, 2048):
        t = gk.asarray((rng.standard_normal((1, m, m)) + m**0.5 * np.eye(m)).astype(dt))
        piv, diag = gk.zeros((1, m), dtype="int32"), gk.zeros((1, m), dtype=dt)
        info, counter = gk.zeros((1,), dtype="int32"), gk.zeros((1,), dtype="uint32")
        row = {"dtype": dt, "m": m}
        opts = (("k", 0), ("n", m), ("nb", w))
        args = [t, piv, diag, info, counter]
        row["panel"] = device_ms(lambda x=args, o=opts: st.run("lu_panel", x, [], o))
        (neg_linv,) = st.run("lu_trinv", [t], [((1, w, w), t.dtype)], (("upper", False),))
        row["trinv"] = device_ms(
            lambda t=t: st.run("lu_trinv", [t], [((1, w, w), t.dtype)], (("upper", False),))
        )
        row["panel copy"] = device_ms(lambda t=t: gk.ascontiguousarray(t[:, :, :w]))
        row["-U12"] = device_ms(lambda t=t, x=neg_linv: x @ t[:, :w, w:])
        neg_u12 = neg_linv @ t[:, :w, w:]
        row["update"] = device_ms(
            lambda t=t, u=neg_u12: product(t[:, w:, :w], u, residual=t[:, w:, w:])
        )
        print(json.dumps(row), flush=True)
