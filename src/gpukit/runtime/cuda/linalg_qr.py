"""The blocked Householder QR's panel kernel on CUDA (kernels/linalg_qr.cu), the step between the
products that decompositions._blocked_qr runs through matmul: "qr_panel" factors a stack of
panels (count x m x nb, any strides; nb <= GK_QR_NB) into its reflectors V (count x m x nb), R11
and -T (count x nb x nb each), one block per matrix. The panel's first rows are held in shared
memory, as many as fit; the rest in a workspace in global memory, stored by column."""

from __future__ import annotations

from ...base import strides
from .. import kernels
from ..args import CONSTANTS
from .plans import PlanBuilder

_C = CONSTANTS
_LD = _C["GK_QR_NB"] + 1  # the kernel's padded row
_STATIC = 16 * 1024  # the kernel's own shared memory, rounded up


def plan_panel(backend, inputs, outputs):
    (x,) = inputs
    count = 1
    for d in x.shape[:-2]:
        count *= d
    m, nb = x.shape[-2:]
    if nb > _C["GK_QR_NB"] or nb > m:
        raise ValueError(f"qr_panel: a panel of {m} x {nb} (at most {_C['GK_QR_NB']} columns)")
    row_bytes = _LD * x.dtype.itemsize
    smem_rows = min(m, (backend.device.max_shared_per_block_optin - _STATIC) // row_bytes)
    shared = smem_rows * row_bytes
    file, defines = kernels.linalg_qr(x.dtype)
    fn = backend.function(file, defines, "gk_qr_panel")
    backend.allow_shared(fn, shared)
    b = PlanBuilder(backend, "a", outputs=[o.size * o.dtype.itemsize for o in outputs])
    ld, stride = strides.matrix_strides(x)
    fields = {"ld": ld, "stride": stride, "m": m, "nb": nb, "smem_rows": smem_rows}
    addresses = [("a", 0, 0, 1), ("v", b.output(0), 0, 1), ("r", b.output(1), 0, 1),
                 ("t", b.output(2), 0, 1)]  # fmt: skip
    if m > smem_rows:  # the rest of the panel, by column (coalesced across a warp's rows)
        w = b.add_scratch(count * (m - smem_rows) * nb * x.dtype.itemsize)
        addresses.append(("w", w, 0, 1))
    b.launch(fn, count, _C["GK_QR_THREADS"], "gk_qr_args", fields, shared=shared,
             addresses=addresses)  # fmt: skip
    return b.build()
