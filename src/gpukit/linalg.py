"""Matrix products: NumPy's `matmul` (the @ operator) and `dot`, PyTorch's `linear`."""

from __future__ import annotations

from . import _core
from .array import GPUArray, alignment, cached_plan, layout, operands, wrap
from .base import dtypes, shapes
from .runtime.backend import Layout
from .runtime.quota import local as _quota


def _product(a: GPUArray, b: GPUArray, bias, row_block) -> GPUArray:
    """a @ b (+ a 1-D bias of the result's dtype along the last axis) through a plan;
    `row_block`: at most that many rows per launch (None: the scheduler's advice)."""
    rt = a._rt
    shape = shapes.matmul_shape(a.shape, b.shape)
    dtype = dtypes.ufunc_result("matmul", a.dtype, b.dtype)
    strides = shapes.contiguous_strides(shape, dtype.itemsize)
    if row_block is None:  # best-effort work beside guaranteed work launches in row slices
        row_block = _core.slice_rows() or None
    key = ["matmul", rt, row_block]
    for x in (a, b, bias):
        if x is not None:
            key += (x.dtype, x.shape, x.strides, alignment(x))
    plan = cached_plan(
        tuple(key),
        lambda: rt.plan_matmul(
            layout(a),
            layout(b),
            Layout(dtype, shape, strides),
            None if bias is None else layout(bias),
            row_block,
        ),
    )
    args = [a._buf, a._offset, b._buf, b._offset]
    if bias is not None:
        args += (bias._buf, bias._offset)
    return wrap(plan(rt.thread.stream, _quota.quota, *args), shape, dtype, strides, rt)


def matmul(a, b, *, row_block=None) -> GPUArray:
    """NumPy's matmul (batch dimensions broadcast, 1-D operands promoted). `row_block`: launch
    at most that many output rows at a time (each launch computes its rows exactly as one
    launch would), so that a scheduler can slice the work into short kernels."""
    (a, b), _ = operands(a, b)
    if not isinstance(a, GPUArray) or not isinstance(b, GPUArray):
        raise ValueError("matmul: scalar operands are not allowed, use * instead")
    if row_block is not None and row_block < 1:
        raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
    return _product(a, b, None, row_block)


def dot(a, b) -> GPUArray:
    """NumPy's dot: a scalar (0-d) operand multiplies; 1-D . 1-D is the inner product (0-d);
    otherwise a sum over a's last axis and b's second-to-last (b's only axis when 1-D), so that
    N-D . M-D has shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:]."""
    (a, b), _ = operands(a, b)
    if not isinstance(a, GPUArray) or not isinstance(b, GPUArray) or a.ndim == 0 or b.ndim == 0:
        return a * b
    if min(a.ndim, b.ndim) == 1 or max(a.ndim, b.ndim) <= 2:
        # matmul's own semantics coincide with dot's here (for 1-D . N-D: a's one row against
        # every matrix of b is dot's a.shape[:-1] + b.shape[:-2] + b.shape[-1:]).
        return matmul(a, b)
    k, n = b.shape[-2:]
    if a.shape[-1] != k:
        raise ValueError(
            f"dot: shapes {a.shape} and {b.shape} are not aligned: "
            f"{a.shape[-1]} (dim {a.ndim - 1}) != {k} (dim {b.ndim - 2})"
        )
    # One matrix product: a's leading axes as rows, b's stacked matrices side by side as columns.
    b_axes = (b.ndim - 2, *range(b.ndim - 2), b.ndim - 1)
    rows = a.reshape(-1, k)
    cols = b.transpose(b_axes).reshape(k, -1)
    return matmul(rows, cols).reshape(*a.shape[:-1], *b.shape[:-2], n)


def linear(x, weight, bias=None) -> GPUArray:
    """PyTorch's linear: x @ weight.T (+ bias), weight of shape (out_features, in_features), x of
    shape (..., in_features). A 1-D bias of the result's dtype is added in the matmul's epilogue;
    any other broadcastable bias in one add after it."""
    ops, _ = operands(x, weight, *([] if bias is None else [bias]))
    x, weight = ops[:2]
    if not isinstance(x, GPUArray) or not isinstance(weight, GPUArray) or x.ndim == 0:
        raise ValueError("linear: x must be at least 1-D and weight a 2-D array")
    if weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: x of shape {x.shape} does not fit weight of shape {weight.shape} "
            "(expected weight (out_features, x.shape[-1]))"
        )
    w_t = weight.T
    shape = shapes.matmul_shape(x.shape, w_t.shape)
    dtype = dtypes.ufunc_result("matmul", x.dtype, weight.dtype)
    bias = ops[2] if bias is not None else None
    fused = (
        isinstance(bias, GPUArray)
        and bias.ndim == 1
        and bias.shape[0] == weight.shape[0]
        and bias.dtype == dtype
    )
    out = _product(x, w_t, bias if fused else None, None)
    if bias is None or fused:
        return out
    try:
        return out + bias
    except ValueError:
        raise ValueError(
            f"linear: bias of shape {getattr(bias, 'shape', ())} does not broadcast to the "
            f"result's shape {shape}"
        ) from None


GPUArray.__matmul__ = lambda self, other: matmul(self, other)
GPUArray.__rmatmul__ = lambda self, other: matmul(other, self)
