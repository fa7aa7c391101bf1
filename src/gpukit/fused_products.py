"""A matrix product with its fused epilogue through a plan (what gpukit.linalg's matmul,
linear and the blocked factorizations of gpukit.decompositions share)."""

from __future__ import annotations

import numpy as np

from . import _core
from .array import (
    GPUArray,
    alignment,
    cached_plan,
    desc_of,
    describe,
    layout,
    planned,
    remember_plan,
    wrap,
)
from .base import dtypes, shapes
from .runtime.backend import Layout
from .runtime.quota import local as _quota

_FLOAT32 = np.dtype("float32")
_Buffer = _core.Buffer
_new = object.__new__

# Plain products seen before are cached beside the plans, under ("plain product", a's Desc, b's
# Desc, their offsets mod 16, tf32): (plan, result's shape, dtype, strides, Desc). Pool buffers
# start at multiples of 128, so the offsets mod 16 fix the alignment the plan was made for. Only
# plain products of pool arrays outside scheduled tasks are remembered: for them the plan
# depends on nothing else.


def planned_product(a, b, tf32: bool):
    """a @ b by one dictionary hit when a product of the same kind ran before; else None."""
    if type(a) is not GPUArray or type(b) is not GPUArray:
        return None
    da, db = a._desc or describe(a), b._desc or describe(b)
    entry = planned(("plain product", da, db, a._offset & 15, b._offset & 15, tf32))
    if entry is None or _core.slice_rows() or _core.preemptible():
        return None
    rt = a._rt
    out = _new(GPUArray)
    out._buf = entry[0](rt.thread.stream, _quota.quota, a._buf, a._offset, b._buf, b._offset)
    out._offset, out._rt, out._desc, out._readonly = 0, rt, entry[4], False
    out._shape, out._dtype, out._strides = entry[1], entry[2], entry[3]
    return out


def product(a: GPUArray, b: GPUArray, bias=None, row_block=None, activation=None, residual=None,
            tf32: bool = False, lower: bool = False):  # fmt: skip
    """activation(a @ b + bias) + residual through a plan: bias 1-D of the result's dtype along
    the last axis, residual of the result's shape (a broadcast view will do); `row_block`: at
    most that many rows per launch (None: the scheduler's advice); `tf32`: float32 products
    may round their operands to TF32 (gpukit.linalg.allow_tf32); `lower`: only the lower
    triangle of each result matrix is needed (the backend may leave the rest unwritten)."""
    rt = a._rt
    paced_rows = _core.slice_rows()  # > 0: a best-effort task's launch beside guaranteed work
    # A best-effort task of a preempting scheduler takes the preemptible form (which yields to
    # guaranteed work by itself), where there is one; else best-effort work launches in row
    # slices while guaranteed work runs.
    preemptible = rt.capabilities.preemption and row_block is None and _core.preemptible()
    if row_block is None and not preemptible:
        row_block = paced_rows or None
    # Descs are interned (runtime, dtype, shape, strides): the key hashes and compares cheaply.
    key = ["matmul", row_block, preemptible, bool(tf32), activation, bool(lower)]
    for x in (a, b, bias, residual):
        key += (None,) if x is None else (x._desc or describe(x), alignment(x))
    plan, expected, (shape, dtype, strides) = cached_plan(
        tuple(key), _plan_product, a, b, bias, residual, row_block, activation, preemptible, tf32,
        lower
    )  # fmt: skip
    plain = bias is None and residual is None and activation is None and row_block is None
    plain = plain and not lower  # (remembered plain products are whole ones)
    if plain and not preemptible and type(a._buf) is _Buffer and type(b._buf) is _Buffer:
        key = ("plain product", a._desc, b._desc, a._offset & 15, b._offset & 15, bool(tf32))
        if planned(key) is None:  # linear's products come here every call
            remember_plan(key, (plan, shape, dtype, strides, desc_of(rt, dtype, shape, strides)))
    args = [a._buf, a._offset, b._buf, b._offset]
    for x in (bias, residual):
        if x is not None:
            args += (x._buf, x._offset)
    if paced_rows:  # capped by expected duration while guaranteed work runs
        _core.set_expected_ns(expected)
        try:
            out = plan(rt.thread.stream, _quota.quota, *args)
        finally:
            _core.set_expected_ns(0)
    else:
        out = plan(rt.thread.stream, _quota.quota, *args)
    return wrap(out, shape, dtype, strides, rt)


def _plan_product(a, b, bias, residual, row_block, activation, preemptible, tf32, lower):
    """(plan, expected ns per launch, (shape, dtype, strides) of the result) of a product: what
    product makes once per kind of call."""
    rt = a._rt
    shape = shapes.matmul_shape(a.shape, b.shape)
    dtype = dtypes.ufunc_result("matmul", a.dtype, b.dtype)
    strides = shapes.contiguous_strides(shape, dtype.itemsize)
    tf32 = bool(tf32) and dtype == _FLOAT32
    layouts = (
        layout(a),
        layout(b),
        Layout(dtype, shape, strides),
        None if bias is None else layout(bias),
    )
    res = None if residual is None else layout(residual)
    result = (shape, dtype, strides)
    if preemptible:
        plan = rt.plan_preemptible_matmul(*layouts, activation, res)
        if plan is not None:
            return plan, 0, result  # it yields by itself: no expected duration to cap
    plan = rt.plan_matmul(*layouts, row_block, activation, res, tf32, lower)
    expected = rt.matmul_expected_ns(*layouts[:3]) if rt.capabilities.launch_pacing else 0
    return plan, expected // max(getattr(plan, "launches", 1), 1), result
