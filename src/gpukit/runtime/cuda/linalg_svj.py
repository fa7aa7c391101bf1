"""One-sided Jacobi on CUDA (kernels/linalg_svj.cu) for decompositions' svd and eigh: "svj"
makes the k rows of x (count x k x len, contiguous, k <= len) mutually orthogonal in place and
applies the same rotations to the rows of r (count x k x k, contiguous); its third input (count,
x's dtype) is each matrix's negligible row norm: rows of norm at most it are set to zero and
rotate no more. With option whole (k <= whole_rows, rows that fit shared memory) the plan is one
launch that sweeps until converged and writes its results with the rows in descending order of
their norms: x's rows divided by their norms (zero rows stay zero) and r (not read: the
rotations of the identity); its outputs are an int32 per matrix, 1 where GK_LA_SWEEPS sweeps did
not converge, and the norms (count x k, descending). Otherwise the plan
is one sweep (a launch per round of a pairing of row blocks) and its fourth input, an int32 per
matrix, is set to 1 where a pair rotated or a row was zeroed (the front end clears it, sweeps and
reads it back)."""

from __future__ import annotations

from .. import kernels
from ..args import CONSTANTS
from .plans import PlanBuilder

_C = CONSTANTS
_GRID_Y = 65535
_STATIC = 3072  # the kernel's own shared memory, rounded up


def _limit(backend) -> int:
    return backend.device.max_shared_per_block_optin - _STATIC


def _bytes(rows: int, length: int, itemsize: int) -> int:
    return (rows * length + rows * rows) * itemsize


def max_len(backend, dtype) -> int:
    """The longest rows the kernel takes (blocks of two rows)."""
    return (_limit(backend) // dtype.itemsize - 4) // 2


def whole_rows(backend, dtype) -> int:
    """The most rows one launch sweeps whole (at most GK_SVJ_ROWS), rows of up to twice as
    many elements fitting its shared memory."""
    rows = _C["GK_SVJ_ROWS"]
    while rows > 2 and _bytes(rows, 2 * rows, dtype.itemsize) > _limit(backend):
        rows -= 2
    return rows


def _rows(backend, k: int, length: int, itemsize: int, whole: bool) -> int:
    rows = k + (k & 1) if whole else _C["GK_SVJ_PAIR_ROWS"]
    while rows > 2 and _bytes(rows, length, itemsize) > _limit(backend):
        if whole:
            raise ValueError(f"svj: {k} rows of {length} do not fit one block")
        rows //= 2
    return rows


def warps_per_pair(rows: int, length: int) -> int:
    """Enough warps to spread long rows (256 elements each) over the block."""
    most = _C["GK_SVJ_THREADS"] // _C["GK_LANES"]
    return max(1, min(most // (rows // 2), length // 256))


def plan_svj(backend, inputs, outputs, options):
    opts = dict(options)
    x = inputs[0]
    *batch, k, length = x.shape
    count = 1
    for d in batch:
        count *= d
    whole = bool(opts["whole"])
    negligible = inputs[2]
    if negligible.dtype != x.dtype or negligible.shape != (count,):
        raise ValueError(
            f"svj: negligible norms {negligible.shape} {negligible.dtype} for {x.shape}"
        )
    if k > length or (whole and k > _C["GK_SVJ_ROWS"]) or length > max_len(backend, x.dtype):
        raise ValueError(f"svj: {k} rows of {length} elements ({'whole' if whole else 'blocks'})")
    rows = _rows(backend, k, length, x.dtype.itemsize, whole)
    blocks = 2 if whole else -(-k // (rows // 2))
    blocks += blocks & 1
    shared = _bytes(rows, length, x.dtype.itemsize)
    file, defines = kernels.linalg_svj(x.dtype)
    fn = backend.function(file, defines, "gk_svj")
    backend.allow_shared(fn, shared)
    b = PlanBuilder(
        backend, "a" * len(inputs), outputs=[o.size * o.dtype.itemsize for o in outputs]
    )
    addresses = [("x", 0, 0, 1), ("r", 1, 0, 1), ("negligible", 2, 0, 1)]
    if whole:
        addresses += [("flag", b.add_scratch(4 * count), 0, 1), ("info", b.output(0), 0, 1),
                      ("norms", b.output(1), 0, 1)]  # fmt: skip
    else:
        addresses += [("flag", 3, 0, 1)]
    eps = 2.0 ** (-23 if x.dtype.itemsize == 4 else -52)
    fields = {"tol": eps * max(length, 64) ** 0.5, "k": k, "len": length, "rows": rows,
              "blocks": blocks, "round": 0, "whole": int(whole)}  # fmt: skip
    threads = rows // 2 * warps_per_pair(rows, length) * _C["GK_LANES"]
    for rnd in range(blocks - 1):
        for first in range(0, count, _GRID_Y):
            n = min(_GRID_Y, count - first)
            size = {"x": k * length * x.dtype.itemsize, "r": k * k * x.dtype.itemsize,
                    "negligible": x.dtype.itemsize, "norms": k * x.dtype.itemsize}  # fmt: skip
            at = [(f, a, first * size.get(f, 4), al) for f, a, _, al in addresses]
            b.launch(fn, (blocks // 2, n), threads, "gk_svj_args", {**fields, "round": rnd},
                     shared=shared, addresses=at)  # fmt: skip
    return b.build()
