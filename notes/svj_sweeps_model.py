"""A NumPy model of kernels/linalg_svj.cu's one-sided Jacobi (the same round-robin pairing of
row blocks, the same inner sweep over a block pair's rows, the same rotation and threshold, in
float32 or float64; sums in NumPy's order, not the kernel's): how many sweeps a random matrix
takes to converge (the last one rotates nothing). `python notes/svj_sweeps_model.py N svd|eigh
[ROWS]` (ROWS: rows of a block pair, GK_SVJ_PAIR_ROWS; N <= ROWS models the one-launch path)."""

import sys
import time

import numpy as np


def pair(k, r, m):
    """The pair at slot k of round r of a round robin over m indices (linalg.cuh's la_pair)."""
    a = 0 if k == 0 else (k - 1 + r) % (m - 1) + 1
    b = (m - 2 - k + r) % (m - 1) + 1
    return min(a, b), max(a, b)


def sweep(x, rows, tol, floor=0.0):
    """One sweep over x's rows in place; the number of rotations (a row of norm at most
    `floor`, set to zero, counts as one)."""
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
        for inner in range(rows - 1):
            ps, qs = zip(*(pair(s, inner, rows) for s in range(half)), strict=True)
            p, q = idx[:, list(ps)].ravel(), idx[:, list(qs)].ravel()
            live = (p < k) & (q < k)
            p, q = p[live], q[live]
            xp, xq = x[p], x[q]
            pp, qq = np.einsum("ij,ij->i", xp, xp), np.einsum("ij,ij->i", xq, xq)
            pq = np.einsum("ij,ij->i", xp, xq)
            rp, rq = np.sqrt(pp), np.sqrt(qq)
            zp, zq = (pp > 0) & (rp <= floor), (qq > 0) & (rq <= floor)
            x[p[zp]] = 0
            x[q[zq]] = 0
            zero = zp | zq
            rotated += int(zero.sum())
            rot = ~zero & (np.abs(pq) > tol * rp * rq)
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


def main():
    n, mode = int(sys.argv[1]), sys.argv[2]
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    rows = max(rows, n + (n & 1)) if n <= 64 and len(sys.argv) <= 3 else rows
    a = np.random.default_rng(0).standard_normal((n, n))
    if mode == "eigh":
        a = (a + a.T) / 2
        x = (a + np.linalg.norm(a) * np.eye(n)).astype(np.float32)
    else:
        x = a.T.astype(np.float32)
    tol = np.finfo(np.float32).eps * np.sqrt(max(n, 64))
    for s in range(30):
        t = time.time()
        r = sweep(x, rows, tol)
        print(f"sweep {s}: {r} rotations ({time.time() - t:.1f} s)", flush=True)
        if r == 0:
            break


if __name__ == "__main__":
    main()
