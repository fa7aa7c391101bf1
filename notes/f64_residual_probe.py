"""The blocked LU's trailing update (L21 (-U12) + A22, 4032 x 64 @ 64 x 4032) with and without
the residual and with strided or contiguous operands, float32 and float64, device time (10 eager
calls between events), beside a copy of the residual. Run after scripts/gpu_machine.sh installed
gpukit: PYTHONPATH=/tmp/gpukit-site python3 notes/f64_residual_probe.py"""

import json

import numpy as np
from probe_timing import device_ms

import gpukit as gk
from gpukit.fused_products import product

rng = np.random.default_rng(0)
w, m = 64, 4096
for dt in ("float32", "float64"):
    t = gk.asarray(rng.standard_normal((1, m, m)).astype(dt))
    u = gk.asarray(rng.standard_normal((1, w, m - w)).astype(dt))
    l21 = t[:, w:, :w]
    lc = gk.ascontiguousarray(l21)
    res = t[:, w:, w:]
    rc = gk.ascontiguousarray(res)
    row = {"dtype": dt}
    cases = {
        "strided a, strided residual": lambda x=l21, y=u, r=res: product(x, y, residual=r),
        "strided a, no residual": lambda x=l21, y=u: x @ y,
        "contiguous a, contiguous residual": lambda x=lc, y=u, r=rc: product(x, y, residual=r),
        "contiguous a, no residual": lambda x=lc, y=u: x @ y,
        "copy of the residual": lambda r=res: gk.ascontiguousarray(r),
    }
    for name, fn in cases.items():
        row[name] = device_ms(fn)
    print(json.dumps(row), flush=True)
