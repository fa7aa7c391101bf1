"""gpukit.linalg: matrix products, NumPy's `matmul` (the @ operator) and `dot`, PyTorch's
`linear` (with a fused bias, activation and residual add), and which kernel a product runs on;
with the factorizations (gpukit.decompositions), norms (gpukit.norms) and the vector helpers
(gpukit.linalg_vectors), the namespace of the Array API's linalg extension and NumPy's.

`gpukit.linalg.allow_tf32` (False by default, like torch.backends.cuda.matmul.allow_tf32): when
True, float32 products on GPUs with TF32 tensor cores (sm_90 here) round their operands to TF32
(10 mantissa bits; relative error near 3e-4 instead of 1e-6)."""

from __future__ import annotations

import numpy as np

from .array import GPUArray, asarray, layout, operands
from .base import dtypes, shapes
from .decompositions import *  # noqa: F403
from .elementwise import elementwise
from .fused_products import planned_product, product
from .linalg_vectors import *  # noqa: F403
from .manipulation import matrix_transpose as matrix_transpose
from .norms import *  # noqa: F403
from .runtime.backend import Layout
from .views import broadcast_to

allow_tf32 = False
_FLOAT32 = np.dtype("float32")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")


def _product(a: GPUArray, b: GPUArray, bias, row_block, activation=None, residual=None):
    return product(a, b, bias, row_block, activation, residual, bool(allow_tf32))


def matmul(a, b, *, row_block=None) -> GPUArray:
    """NumPy's matmul (batch dimensions broadcast, 1-D operands promoted). `row_block`: launch
    at most that many output rows at a time (each launch computes its rows exactly as one
    launch would), so that a scheduler can slice the work into short kernels."""
    if row_block is None:
        out = planned_product(a, b, bool(allow_tf32))
        if out is not None:
            return out
    if not (isinstance(a, GPUArray) and isinstance(b, GPUArray) and a._rt is b._rt):
        (a, b), _ = operands(a, b)
    if not isinstance(a, GPUArray) or not isinstance(b, GPUArray):
        raise ValueError("matmul: scalar operands are not allowed, use * instead")
    if row_block is not None and row_block < 1:
        raise ValueError(f"matmul: row_block must be at least 1, got {row_block}")
    return _product(a, b, None, row_block)


def vdot(a, b) -> GPUArray:
    """NumPy's vdot: the dot product of a and b flattened, a conjugated when complex (0-d)."""
    (a, b), rt = operands(a, b)
    a, b = (x if isinstance(x, GPUArray) else asarray(x, rt=rt) for x in (a, b))
    if a.size != b.size:
        raise ValueError(f"vdot: vectors have different lengths ({a.size} and {b.size})")
    a, b = a.reshape(-1), b.reshape(-1)
    if a.dtype.kind == "c":
        a = elementwise("conjugate", a)
    return matmul(a, b)


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


def linear(x, weight, bias=None, activation=None, residual=None) -> GPUArray:
    """PyTorch's linear, x @ weight.T (+ bias), then `activation` ("relu", "gelu" (exact),
    "gelu_tanh", "silu"), then + `residual`: weight of shape (out_features, in_features), x of
    shape (..., in_features), residual broadcastable to the result. A 1-D bias and a residual of
    the result's dtype are applied in the product's epilogue, in float32 before the one rounding
    of the result (where the kernel has an epilogue); any other bias is added after the product
    (with NumPy's promotion), any other residual in float32 and stored in the result's dtype."""
    ops, _ = operands(x, weight, *(y for y in (bias, residual) if y is not None))
    x, weight = ops[:2]
    if not isinstance(x, GPUArray) or not isinstance(weight, GPUArray) or x.ndim == 0:
        raise ValueError("linear: x must be at least 1-D and weight a 2-D array")
    if weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: x of shape {x.shape} does not fit weight of shape {weight.shape} "
            "(expected weight (out_features, x.shape[-1]))"
        )
    if activation is not None and activation not in ACTIVATIONS:
        raise ValueError(
            f"linear: activation must be one of {', '.join(ACTIVATIONS)} or None, "
            f"not {activation!r}"
        )
    w_t = weight.T
    shape = shapes.matmul_shape(x.shape, w_t.shape)
    dtype = dtypes.ufunc_result("matmul", x.dtype, weight.dtype)
    if (activation is not None or residual is not None) and not dtypes.is_floating(dtype):
        raise ValueError(f"linear: activation and residual need a floating result, not {dtype}")
    bias = ops[2] if bias is not None else None
    res = ops[-1] if residual is not None else None
    if res is not None:
        if not isinstance(res, GPUArray):
            raise ValueError("linear: residual must be an array")
        try:
            res = broadcast_to(res, shape)
        except ValueError:
            raise ValueError(
                f"linear: residual of shape {res.shape} does not broadcast to the result's "
                f"shape {shape}"
            ) from None
    fused = (
        isinstance(bias, GPUArray)
        and bias.ndim == 1
        and bias.shape[0] == weight.shape[0]
        and bias.dtype == dtype
    )
    if bias is None or fused:
        return _product(x, w_t, bias, None, activation, res)
    # The bias first (it may promote the result), then the rest of the epilogue as ops.
    out = _product(x, w_t, None, None)
    try:
        out = out + bias
    except ValueError:
        raise ValueError(
            f"linear: bias of shape {getattr(bias, 'shape', ())} does not broadcast to the "
            f"result's shape {shape}"
        ) from None
    if activation is not None:
        out = elementwise(activation, out)
    if res is not None:
        out = elementwise("add", out, res, out=out)
    return out


def matmul_path(a, b) -> str:
    """The kernel family `a @ b` runs on, by the names gpukit.info() uses: "sm90a-wgmma-tma"
    (Hopper: TMA + wgmma), "sm80-mma" (mma.sync tensor cores), "gemv" (a few rows: the weight
    streamed once), "f32-simt" (exact float32), "generic" (the tiled kernel, every dtype), or
    "numpy" on the CPU backend."""
    (a, b), rt = operands(a, b)
    if not isinstance(a, GPUArray) or not isinstance(b, GPUArray):
        raise ValueError("matmul_path: both operands must be arrays")
    shape = shapes.matmul_shape(a.shape, b.shape)
    dtype = dtypes.ufunc_result("matmul", a.dtype, b.dtype)
    out = Layout(dtype, shape, shapes.contiguous_strides(shape, dtype.itemsize))
    return rt.matmul_path(layout(a), layout(b), out, bool(allow_tf32))


GPUArray.__matmul__ = lambda self, other: matmul(self, other)
GPUArray.__rmatmul__ = lambda self, other: matmul(other, self)
