"""The CUDA plan of the blocked Cholesky (runtime/cuda/linalg_chol.py) at each panel width, with
and without lookahead, n = 4096 in float32 and float64: eager (device and wall ms) and a
graph's replay, beside torch.linalg.cholesky in the same process, each factor checked against
NumPy's in float64 and the bits of every width's factor compared with the default's. Run from
notes/ after scripts/gpu_machine.sh installed gpukit:
PYTHONPATH=/tmp/gpukit-site python3 chol_panel_probe.py"""

import os

import numpy as np
from chol_probe import torch_ms
from probe_timing import eager_ms, graph_ms

import gpukit as gk
from gpukit.linalg_steps import I32, run
from gpukit.runtime.cuda import linalg_chol

PANELS = [int(p) for p in os.environ.get("PANELS", "128 256 512").split()]


def factor(x, panel, lookahead):
    n = x.shape[-1]
    out, _ = run("cholesky_blocked", [x.reshape(1, n, n)], [((1, n, n), x.dtype), ((1,), I32)],
                 (("panel", panel), ("lookahead", lookahead)))  # fmt: skip
    return out


def main():
    n = int(os.environ.get("N", 4096))
    rng = np.random.default_rng(0)
    g = rng.standard_normal((n, n))
    spd = g @ g.T / n + np.eye(n)
    ref = np.linalg.cholesky(spd)
    for dt in ("float32", "float64"):
        host = spd.astype(dt)
        x = gk.asarray(host)
        default = gk.linalg.cholesky(x).to_numpy()
        print(f"{dt}: torch {torch_ms(host):.2f} ms; default panel {linalg_chol.PANEL}")
        for panel, ahead in [(p, a) for p in PANELS for a in (True, False)]:
            got = factor(x, panel, ahead).to_numpy().reshape(n, n)
            err = float(np.abs(got - ref).max())
            dev, wall = eager_ms(lambda x=x, p=panel, a=ahead: factor(x, p, a), 5)
            gm = graph_ms(lambda x=x, p=panel, a=ahead: factor(x, p, a), 5)
            same = np.array_equal(got, default)
            print(
                f"  panel {panel:4d} lookahead {ahead:d}: eager {dev:.2f} ms (wall {wall:.2f}), "
                f"graph {gm:.2f}, "
                f"max |L - L64| {err:.1e}, same bits as gk.linalg.cholesky: {same}",
                flush=True,
            )


if __name__ == "__main__":
    main()
