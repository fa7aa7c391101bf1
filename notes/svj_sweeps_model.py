"""A NumPy model of kernels/linalg_svj.cu's one-sided Jacobi (the same round-robin pairing of
row blocks, the same inner sweep over a block pair's rows, the same rotation, threshold and
negligible rows, in float32 or float64; sums in NumPy's order, not the kernel's): how many sweeps
a matrix takes to converge (the last one rotates nothing).
`python notes/svj_sweeps_model.py N MODE [ROWS] [DTYPE] [--no-floor]`: MODE svd (standard
normal), eigh (its symmetric part, shifted as jacobi_eigh does), graded (singular values 1 to
1e-6, random singular vectors: test_linalg_orthogonal's full-rank matrix), rank (its rank N / 2
one) or polyfit (test_polyfit_through_the_svd's 12 x 5 Vandermonde matrix of rank 3; N ignored);
ROWS: rows of a block pair (GK_SVJ_PAIR_ROWS = 16; N <= 64 models the one-launch path);
DTYPE float32 (default) or float64; --no-floor: no negligible rows (the kernel before the fix,
which rotated the noise rows of zero singular values until the sweep limit); --all-pairs: every
round of a sweep meets every pair of its block pair's rows (the kernel before it met only the
pairs across the two blocks after a sweep's first round)."""

import sys
import time

import numpy as np


def pair(k, r, m):
    """The pair at slot k of round r of a round robin over m indices (linalg.cuh's la_pair)."""
    a = 0 if k == 0 else (k - 1 + r) % (m - 1) + 1
    b = (m - 2 - k + r) % (m - 1) + 1
    return min(a, b), max(a, b)


ACROSS = "--all-pairs" not in sys.argv


def sweep(x, rows, tol, floor=None):
    """One sweep over x's rows in place; the number of rotations (a row of norm at most
    `floor`, set to zero, counts as one; None: no such rows, every pair tested)."""
    k = x.shape[0]
    half = rows // 2
    blocks = -(-k // half)
    blocks += blocks & 1
    rotated = 0
    for rnd in range(blocks - 1):
        idx = []
        for slot in range(blocks // 2):
            b0, b1 = pair(slot, rnd, blocks)
            idx.append([b0 * half + i for i in range(half)] + [b1 * half + i for i in range(half)])
        idx = np.array(idx)
        across = rnd > 0 and ACROSS  # after a sweep's first round: the pairs across blocks only
        for inner in range(half if across else rows - 1):
            if across:
                ps, qs = list(range(half)), [half + (s + inner) % half for s in range(half)]
            else:
                ps, qs = zip(*(pair(s, inner, rows) for s in range(half)), strict=True)
            p, q = idx[:, list(ps)].ravel(), idx[:, list(qs)].ravel()
            live = (p < k) & (q < k)
            p, q = p[live], q[live]
            xp, xq = x[p], x[q]
            pp, qq = np.einsum("ij,ij->i", xp, xp), np.einsum("ij,ij->i", xq, xq)
            pq = np.einsum("ij,ij->i", xp, xq)
            rp, rq = np.sqrt(pp), np.sqrt(qq)
            rot = np.abs(pq) > tol * rp * rq
            if floor is not None:
                zp, zq = (pp > 0) & (rp <= floor), (qq > 0) & (rq <= floor)
                x[p[zp]] = 0
                x[q[zq]] = 0
                rotated += int((zp | zq).sum())
                rot &= ~(zp | zq) & (rp > floor) & (rq > floor)
            if not rot.any():
                continue
            rotated += int(rot.sum())
            p, q, pp, qq, pq = p[rot], q[rot], pp[rot], qq[rot], pq[rot]
            zeta = (qq - pp) / (2 * pq)
            az = np.abs(zeta)
            big = az > 1 / np.finfo(x.dtype).eps
            t = np.where(big, 0.5 / np.where(big, az, 1), 1 / (az + np.sqrt(1 + az * az)))
            t = np.where(zeta < 0, -t, t).astype(x.dtype)
            cs = (1 / np.sqrt(1 + t * t)).astype(x.dtype)
            sn = cs * t
            u, w = x[p], x[q]
            x[p] = cs[:, None] * u - sn[:, None] * w
            x[q] = sn[:, None] * u + cs[:, None] * w
    return rotated


def matrix(n, mode, rng):
    """Rows to orthogonalize, in float64."""
    if mode == "polyfit":
        a = np.vander(np.repeat([-1.0, 0.5, 2.0], 4), 5, increasing=True)
        return (a / np.linalg.norm(a, axis=0)).T
    if mode in ("svd", "eigh"):
        a = rng.standard_normal((n, n))
        return (a + a.T) / 2 + np.linalg.norm(a + a.T) / 2 * np.eye(n) if mode == "eigh" else a.T
    s = np.logspace(0, -6, n)
    if mode == "rank":
        s[: n // 2], s[n // 2 :] = np.logspace(0, -3, n // 2), 0
    u, v = (np.linalg.qr(rng.standard_normal((n, n)))[0] for _ in range(2))
    return ((u * s) @ v.T).T


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n, mode = int(args[0]), args[1]
    x = matrix(n, mode, np.random.default_rng(0))
    k = x.shape[0]
    rows = int(args[2]) if len(args) > 2 else (k + (k & 1) if k <= 64 else 16)
    dtype = np.dtype(args[3] if len(args) > 3 else "float32")
    x = x.astype(dtype)
    eps = np.finfo(dtype).eps
    tol = eps * np.sqrt(max(x.shape[1], 64))
    floor = None if "--no-floor" in sys.argv else eps * np.linalg.norm(x.astype(np.float64))
    for s in range(60):
        t = time.time()
        r = sweep(x, rows, tol, floor)
        zero = int((~x.any(axis=1)).sum())
        print(f"sweep {s}: {r} rotations, {zero} zero rows ({time.time() - t:.1f} s)", flush=True)
        if r == 0:
            break


if __name__ == "__main__":
    main()
