"""What gpukit's factorization drivers share (decompositions.py, orthogonal.py): a backend's
linalg plan over contiguous stacks, the info arrays read back, and small pieces of stacks."""

from __future__ import annotations

import numpy as np

from .array import GPUArray, cached_plan, layout, wrap
from .base import shapes as _shapes
from .elementwise import conjugate
from .errors import LinAlgError
from .runtime import capture
from .runtime.backend import Layout
from .runtime.quota import local as _quota

I32 = np.dtype("int32")


def count(batch: tuple) -> int:
    n = 1
    for d in batch:
        n *= d
    return n


def run(op: str, inputs, outputs, options=()) -> list[GPUArray]:
    """The backend's `op` over `inputs` (their layouts are part of the plan's key); `outputs`:
    (shape, dtype) of each result, allocated contiguous by the plan. Plans made while the thread
    captures a graph are cached apart (a backend may plan differently then: CUDA takes no
    cooperative launch into a graph)."""
    rt = inputs[0]._rt
    outs = tuple(
        Layout(np.dtype(dt), tuple(sh), _shapes.contiguous_strides(sh, np.dtype(dt).itemsize))
        for sh, dt in outputs
    )
    ins = tuple(layout(x) for x in inputs)
    key = ("linalg", op, rt, ins, outs, tuple(options), capture.current() is not None)
    plan = cached_plan(key, lambda: rt.plan_linalg(op, ins, outs, tuple(options)))
    args = []
    for x in inputs:
        args += (x._buf, x._offset)
    made = plan(rt.thread.stream, _quota.quota, *args)
    made = made if isinstance(made, tuple) else () if made is None else (made,)
    return [wrap(m, o.shape, o.dtype, o.strides, rt) for m, o in zip(made, outs, strict=True)]


def check(info: GPUArray, message: str) -> None:
    """Raises LinAlgError(message) when any matrix's info is set (one read back)."""
    if info.size and info.to_numpy().any():
        raise LinAlgError(message)


def mT(x: GPUArray) -> GPUArray:
    """The conjugate transpose of each matrix (a view for real dtypes; the drivers take many)."""
    *batch, m, n = x.shape
    *outer, sm, sn = x.strides
    t = x._view((*batch, n, m), (*outer, sn, sm))
    return conjugate(t) if t.dtype.kind == "c" else t
