"""Where solve's time goes at n = 4096: det (the LU alone), the LU with and without its panels
kept, the substitution of one right-hand side alone, solve; torch alongside (eager calls, best
of 3); then device times as CUDA graph replays: the substitution (ms), and gk_lu_trinv (64 x
64, either mode) alone (us a launch). Run on the GPU machine from notes/."""

import numpy as np
import torch
from probe_timing import best_ms, graph_ms

import gpukit as gk
from gpukit import decompositions as dec
from gpukit import linalg_steps as st

rng = np.random.default_rng(0)
for dt in ("float32", "float64"):
    n = 4096
    h = rng.standard_normal((n, n)).astype(dt) + n**0.5 * np.eye(n, dtype=dt)
    hb = rng.standard_normal((n,)).astype(dt)
    a, b = gk.asarray(h), gk.asarray(hb)
    a3, b3 = a.reshape(1, n, n), b.reshape(1, n, 1)
    nb = dec._lu_nb(a3)
    lu = dec._blocked_lu(a3, nb)
    ta, tb = torch.from_numpy(h).cuda(), torch.from_numpy(hb).cuda()
    rows = {
        "det": best_ms(lambda: gk.linalg.det(a), 5),  # noqa: B023 (timed before the next dt)
        "lu keep=False": best_ms(lambda: dec._blocked_lu(a3, nb, keep=False), 5),  # noqa: B023
        "lu keep=True": best_ms(lambda: dec._blocked_lu(a3, nb), 5),  # noqa: B023
        "substitution": best_ms(lambda: dec._lu_solve(lu, b3), 5),  # noqa: B023
        "solve": best_ms(lambda: gk.linalg.solve(a, b), 5),  # noqa: B023
        "torch solve": best_ms(lambda: torch.linalg.solve(ta, tb), 5, torch.cuda.synchronize),  # noqa: B023
        "substitution graph": graph_ms(lambda: dec._lu_solve(lu, b3)),  # noqa: B023
    }
    for upper in (False, True):  # us a launch: graphs of 10 calls
        out = [((1, nb, nb), a3.dtype)]
        rows[f"trinv us upper={upper}"] = 100 * graph_ms(
            lambda t=a3, o=out, u=upper: [
                st.run("lu_trinv", [t], o, (("upper", u),)) for _ in range(10)
            ]
        )
    x = gk.linalg.solve(a, b).to_numpy().astype(np.float64)
    scale = np.linalg.norm(h) * np.linalg.norm(x) * np.finfo(dt).eps * n
    res = np.linalg.norm(h.astype(np.float64) @ x - hb) / scale
    times = " ".join(f"{k}={v:.2f}" for k, v in rows.items())
    print(dt, times, f"scaled residual {res:.2e}")
