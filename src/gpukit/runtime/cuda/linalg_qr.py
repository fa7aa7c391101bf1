"""The blocked Householder QR's panel kernel on CUDA (kernels/linalg_qr.cu), the step between the
products that decompositions._blocked_qr runs through matmul: "qr_panel" factors a stack of
panels (count x m x nb, any strides; nb <= GK_QR_NB) into its reflectors V (count x m x nb), R11
and -T (count x nb x nb each). Past GK_QR_THREADS rows, on sm_90+, one thread-block cluster per
matrix (every block's share of the rows in its shared memory: _cluster); else one block per
matrix, the panel's first rows held in shared memory, as many as fit, the rest in a workspace in
global memory, stored by column. Option cluster (default: the planner's choice) forces the
cluster (True, where the device has it) or the one block (False)."""

from __future__ import annotations

import numpy as np

from ...base import strides
from .. import kernels
from ..args import CONSTANTS
from .plans import PlanBuilder

_C = CONSTANTS
_LD = _C["GK_QR_NB"] + 1  # the kernel's padded row
_STATIC = 16 * 1024  # the kernel's own shared memory, rounded up
_GRID_Y = 65535


def _cluster(backend, file, defines, dtype, m: int, nb: int, count: int):
    """(gk_qr_panel_cluster, rows per block, dynamic shared bytes) where the panel takes one
    thread-block cluster per matrix: an sm_90+ device, every block's rows (at least nb, so that
    the panel's first nb rows are block 0's) in its shared memory, and a cluster resident at
    once (cuOccupancyMaxActiveClusters, the non-portable size of 16 allowed); else None."""
    device = backend.device
    query = getattr(device, "max_active_clusters", None)
    if query is None or count > _GRID_Y or tuple(device.compute_capability) < (9, 0):
        return None
    rows = max(-(-m // _C["GK_QR_CLUSTER"]), nb)
    shared = (rows * _LD + _C["GK_QR_CLUSTER_SPARE"]) * np.dtype(dtype).itemsize
    if shared > device.max_shared_per_block_optin - _STATIC:
        return None
    fn = backend.function(file, defines, "gk_qr_panel_cluster")
    backend.allow_shared(fn, shared)
    if query(fn, _C["GK_QR_CLUSTER"], _C["GK_QR_CLUSTER_THREADS"], shared) < 1:
        return None
    return fn, rows, shared


def plan_panel(backend, inputs, outputs, options=()):
    (x,) = inputs
    count = 1
    for d in x.shape[:-2]:
        count *= d
    m, nb = x.shape[-2:]
    if nb > _C["GK_QR_NB"] or nb > m:
        raise ValueError(f"qr_panel: a panel of {m} x {nb} (at most {_C['GK_QR_NB']} columns)")
    file, defines = kernels.linalg_qr(x.dtype)
    b = PlanBuilder(backend, "a", outputs=[o.size * o.dtype.itemsize for o in outputs])
    ld, stride = strides.matrix_strides(x)
    fields = {"ld": ld, "stride": stride, "m": m, "nb": nb, "smem_rows": 0, "rows_per": 0}
    addresses = [("a", 0, 0, 1), ("v", b.output(0), 0, 1), ("r", b.output(1), 0, 1),
                 ("t", b.output(2), 0, 1)]  # fmt: skip
    want = dict(options).get("cluster")
    cluster = None
    if want or (want is None and m > _C["GK_QR_THREADS"]):
        cluster = _cluster(backend, file, defines, x.dtype, m, nb, count)
    if cluster is not None:
        fn, rows, shared = cluster
        b.launch(fn, (_C["GK_QR_CLUSTER"], count), _C["GK_QR_CLUSTER_THREADS"], "gk_qr_args",
                 {**fields, "rows_per": rows}, shared=shared, addresses=addresses)  # fmt: skip
        return b.build()
    row_bytes = _LD * x.dtype.itemsize
    smem_rows = min(m, (backend.device.max_shared_per_block_optin - _STATIC) // row_bytes)
    fields["smem_rows"] = smem_rows
    shared = smem_rows * row_bytes
    fn = backend.function(file, defines, "gk_qr_panel")
    backend.allow_shared(fn, shared)
    if m > smem_rows:  # the rest of the panel, by column (coalesced across a warp's rows)
        w = b.add_scratch(count * (m - smem_rows) * nb * x.dtype.itemsize)
        addresses.append(("w", w, 0, 1))
    b.launch(fn, count, _C["GK_QR_THREADS"], "gk_qr_args", fields, shared=shared,
             addresses=addresses)  # fmt: skip
    return b.build()
