"""Numerical methods on sequences with NumPy's names, built from slices, elementwise ops, sorted
search and the linear-algebra kernels: gradient, convolve, correlate, polyval, interp, polyfit."""

from __future__ import annotations

import contextlib
import operator
import warnings

import numpy as np

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .complex_parts import imag, real
from .creation import empty, zeros
from .decompositions import cholesky, inv, lstsq
from .elementwise import absolute, clip, isnan, sqrt, where
from .errors import LinAlgError
from .indexing import take
from .matrices import vander
from .reductions import sum as _sum
from .sorting import argsort, searchsorted
from .statistics import diff
from .views import concatenate


def _float(f: GPUArray) -> GPUArray:
    """Integers and booleans as float64, as NumPy's gradient does."""
    return f if _dtypes.is_floating(f.dtype) else f.astype("float64")


def _spacings(varargs, axes, f: GPUArray) -> list:
    """Per axis a Python float (uniform spacing) or a 1-D GPUArray of coordinates."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(_host_or_device(varargs[0])) == 0:
        return [float(_host_or_device(varargs[0]))] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    out = []
    for spacing, axis in zip(varargs, axes, strict=True):
        if np.ndim(_host_or_device(spacing)) == 0:
            out.append(float(_host_or_device(spacing)))
            continue
        coords = _args.arrays(f, spacing)[1]
        if coords.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if coords.shape[0] != f.shape[axis]:
            raise ValueError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
        out.append(coords)
    return out


def _host_or_device(x):
    return x if isinstance(x, GPUArray) else np.asarray(x)


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """Second-order central differences inside, one-sided differences of order `edge_order`
    (1 or 2) at the ends, along each axis; spacing per axis as a scalar or coordinates."""
    f = _float(_args.array(f))
    if axis is None:
        axes = tuple(range(f.ndim))
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(_args.axis_index(a, f.ndim) for a in axes)
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    results = []
    for ax, h in zip(axes, _spacings(varargs, axes, f), strict=True):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, at least "
                f"(edge_order + 1) elements are required (axis {ax} has {f.shape[ax]})."
            )
        results.append(_gradient_along(f, ax, h, edge_order))
    return results[0] if len(results) == 1 else tuple(results)


def _gradient_along(f: GPUArray, ax: int, h, edge_order: int) -> GPUArray:
    head = (slice(None),) * ax

    def at(s):
        return f[(*head, s)]

    def along(v: GPUArray) -> GPUArray:  # coordinates-derived 1-D factors, broadcast along ax
        return v.reshape((-1,) + (1,) * (f.ndim - ax - 1)).astype(f.dtype, copy=False)

    out = zeros(f.shape, f.dtype, device=f.device)
    if isinstance(h, float):
        out[(*head, slice(1, -1))] = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * h)
        if edge_order == 1:
            out[(*head, 0)] = (at(1) - at(0)) / h
            out[(*head, -1)] = (at(-1) - at(-2)) / h
        else:
            out[(*head, 0)] = (at(0) * -1.5 + at(1) * 2.0 - at(2) * 0.5) / h
            out[(*head, -1)] = (at(-3) * 0.5 - at(-2) * 2.0 + at(-1) * 1.5) / h
        return out
    dx = diff(h.astype("float64"))
    dx1, dx2 = dx[:-1], dx[1:]
    a = along(-dx2 / (dx1 * (dx1 + dx2)))
    b = along((dx2 - dx1) / (dx1 * dx2))
    c = along(dx1 / (dx2 * (dx1 + dx2)))
    out[(*head, slice(1, -1))] = (
        a * at(slice(None, -2)) + b * at(slice(1, -1)) + c * at(slice(2, None))
    )
    d = dx.to_numpy()
    if edge_order == 1:
        out[(*head, 0)] = (at(1) - at(0)) / float(d[0])
        out[(*head, -1)] = (at(-1) - at(-2)) / float(d[-1])
        return out
    d1, d2 = float(d[0]), float(d[1])
    out[(*head, 0)] = (
        at(0) * (-(2.0 * d1 + d2) / (d1 * (d1 + d2)))
        + at(1) * ((d1 + d2) / (d1 * d2))
        + at(2) * (-d1 / (d2 * (d1 + d2)))
    )
    d1, d2 = float(d[-2]), float(d[-1])
    out[(*head, -1)] = (
        at(-3) * (d2 / (d1 * (d1 + d2)))
        + at(-2) * (-(d2 + d1) / (d1 * d2))
        + at(-1) * ((2.0 * d2 + d1) / (d2 * (d1 + d2)))
    )
    return out


def convolve(a, v, mode: str = "full") -> GPUArray:
    """Discrete linear convolution of two 1-D sequences ('full', 'same' or 'valid'), one
    multiply-add of a shifted slice per element of the shorter one."""
    a, v = _args.arrays(a, v)
    if a.ndim > 1 or v.ndim > 1:
        raise ValueError("object too deep for desired array")
    a, v = a.reshape(-1), v.reshape(-1)
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    dtype = _dtypes.result_type(a.dtype, v.dtype)
    full = zeros((n + m - 1,), dtype, device=a.device)
    for j in range(m):
        full[j : j + n] += a * v[j]
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start : start + n]
    if mode == "valid":
        return full[m - 1 : n]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def correlate(a, v, mode: str = "valid") -> GPUArray:
    """Cross-correlation of two 1-D sequences: sum_n a[n + k] * v[n]."""
    a, v = _args.arrays(a, v)
    return convolve(a, v.reshape(-1)[::-1], mode)


def polyval(p, x) -> GPUArray:
    """The polynomial with coefficients p (highest power first) at x, by Horner's rule."""
    p = _args.array(p)
    if p.ndim != 1:
        raise ValueError("polyval needs a 1-D array of coefficients")
    x = _args.arrays(p, x)[1]
    y = zeros(x.shape, x.dtype, device=x.device)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def interp(x, xp, fp, left=None, right=None, period=None) -> GPUArray:
    """NumPy's interp: the piecewise-linear interpolant of the points (xp, fp), xp increasing, at
    x; `left` / `right` (default fp[0] / fp[-1]) beyond the ends; with `period`, xp is taken
    modulo it and left / right are ignored. float64, or complex128 for complex fp."""
    x, xp, fp = _args.arrays(x, xp, fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError(f"xp and fp must be 1-D, not {xp.ndim}-D and {fp.ndim}-D")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if fp.dtype.kind == "c":  # each part interpolated alone, as NumPy does
        out = empty(x.shape, "complex128", device=x.device)
        for part in (real, imag):
            ends = [None if e is None else part(_args.arrays(fp, e)[1]) for e in (left, right)]
            part(out)[...] = interp(x, xp, part(fp), *ends, period)
        imag(out)[...] = where(isnan(x), 0.0, imag(out))  # NumPy gives nan+0j at a NaN x
        return out
    x, xp, fp = (a if a.dtype == np.float64 else a.astype("float64") for a in (x, xp, fp))
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period, left, right = abs(float(period)), None, None
        x, xp = x % period, xp % period
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    left = fp[0] if left is None else left
    right = fp[n - 1] if right is None else right
    if n == 1:
        inside = where(x == x, fp[0], x)  # fp[0] in x's shape; NaN where x is
    else:
        j = clip(searchsorted(xp, x, "right") - 1, 0, n - 2)
        x0, x1, y0, y1 = take(xp, j), take(xp, j + 1), take(fp, j), take(fp, j + 1)
        slope = (y1 - y0) / (x1 - x0)
        inside = slope * (x - x0) + y0
        # From the other end where that is NaN (an infinite fp), as NumPy does.
        inside = where(isnan(inside), slope * (x - x1) + y1, inside)
        inside = where(isnan(inside) & (y0 == y1) & ~isnan(x), y0, inside)
        inside = where(x == xp[n - 1], fp[n - 1], inside)
    return where(x < xp[0], left, where(x > xp[n - 1], right, inside))


_CHOLESKY_QR_COND = 1e-8  # 1 / the largest cond(a) Cholesky QR keeps accurate in float64


def _full_rank_lstsq(a: GPUArray, b: GPUArray) -> tuple[GPUArray, GPUArray]:
    """(x minimizing ||b - a x||, inv(a^H a)) for a of full column rank, through CholeskyQR2:
    a = Q R from two Cholesky factorizations of Gram matrices (as accurate as Householder QR
    while cond(a) < 1e8 in float64), which runs on every backend. LinAlgError when a Gram
    matrix is not positive definite or R's diagonal shows cond(a) past 1e8."""
    r_inv = None
    q = a
    for _ in range(2):
        r = cholesky(q.mT.conj() @ q, upper=True)
        if r_inv is None:  # cond(a) is at least the spread of R's diagonal
            d = np.abs(r.diagonal().to_numpy())
            if d.min() <= _CHOLESKY_QR_COND * d.max():
                raise LinAlgError("too ill-conditioned for Cholesky QR")
        step = inv(r)
        q = q @ step
        r_inv = step if r_inv is None else r_inv @ step
    x = r_inv @ (q.mT.conj() @ b)
    return x, r_inv @ r_inv.mT.conj()


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's polyfit: the coefficients (highest power first) of the degree-`deg` polynomial
    that fits y(x) in the least-squares sense, weighted by `w`; y may hold one data set per
    column. Columns of the Vandermonde matrix are scaled to unit norm as NumPy does. A
    well-conditioned fit solves through Cholesky QR on any backend; `full=True` or a
    rank-deficient fit goes through lstsq's SVD (NumPy's result and RankWarning; on the GPU only
    where the SVD runs there). `cov=True` / "unscaled": also the coefficients' covariance."""
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x, y = _args.arrays(x, y)
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    order, m = deg + 1, x.shape[0]
    inexact = "complex128" if "c" in (x.dtype.kind, y.dtype.kind) else "float64"
    lhs = vander(x.astype(inexact if x.dtype.kind == "c" else "float64"), order)
    rhs = y.astype(inexact)
    if w is not None:
        w = _args.arrays(x, w)[1]
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != m:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w.reshape(-1, 1)
        rhs = rhs * (w.reshape(-1, 1) if rhs.ndim == 2 else w)
    rcond = m * float(np.finfo(np.float64).eps) if rcond is None else rcond
    scale = sqrt(_sum(absolute(lhs) ** 2, axis=0))
    lhs = lhs / scale
    gram_inv = None
    if not full:
        with contextlib.suppress(LinAlgError):  # rank-deficient: the SVD below
            c, gram_inv = _full_rank_lstsq(lhs, rhs)
    if gram_inv is None:
        c, resids, rank, singular = lstsq(lhs, rhs, rcond)
        if rank != order and not full:
            warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, 2)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, singular, rcond
    if not cov:
        return c
    if cov != "unscaled" and m <= order:
        raise ValueError(
            "the number of data points must exceed order to scale the covariance matrix"
        )
    if gram_inv is None:
        gram_inv = inv(lhs.mT.conj() @ lhs)
    base = gram_inv / (scale.reshape(-1, 1) * scale.reshape(1, -1))
    if cov == "unscaled":
        factor = 1.0
    else:
        fitted = lhs @ (c.T * scale).T
        factor = _sum(absolute(rhs - fitted) ** 2, axis=0) / (m - order)
    return c, (base * factor if rhs.ndim == 1 else base.reshape(order, order, 1) * factor)


__all__ = ["convolve", "correlate", "gradient", "interp", "polyfit", "polyval"]
