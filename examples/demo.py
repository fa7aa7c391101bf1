"""gpukit's main demo: array math on the GPU when there is one, on the CPU otherwise."""

import time

import numpy as np

import gpukit as gk


def main():
    print(gk.info())
    print()

    a = gk.arange(6, dtype="float32").reshape(2, 3)
    print("a =", a)
    print("a @ a.T =", a @ a.T)

    rng = np.random.default_rng()
    x_host = rng.standard_normal((512, 256)).astype(np.float32)
    w_host = rng.standard_normal((256, 128)).astype(np.float32)
    x, w = gk.asarray(x_host), gk.asarray(w_host)

    start = time.perf_counter()
    y = (x @ w) * 0.5 + 1.0
    col_mean = y.mean(axis=0)
    peak = y.max()
    result = col_mean.to_numpy()
    elapsed = time.perf_counter() - start

    expected = ((x_host.astype(np.float64) @ w_host) * 0.5 + 1.0).mean(axis=0)
    error = np.abs(result - expected).max()
    print(
        f"y = (x @ w) * 0.5 + 1 over {x.shape} @ {w.shape}: max {float(peak):.4f}, "
        f"column means match NumPy to {error:.2e} ({elapsed * 1e3:.2f} ms)"
    )
    print(f"ran on backend: {gk.backend()}")


if __name__ == "__main__":
    main()
