"""softmax, log_softmax, layer_norm, rms_norm: each row read once where it fits in registers,
float32 accumulation for 16-bit floats, statistics merged in a fixed order (the same bits on every
run). The norms take a residual stream as decoders use it: `rms_norm(x, w, residual=r)` returns
(rms_norm(h) * w, h) with h = x + r, in one pass. Results are contiguous."""

from __future__ import annotations

import operator

from ..array import GPUArray, desc_of, describe, layout, wrap
from ..base import shapes as _shapes
from ..runtime.quota import local as _quota
from ._checks import float_array, real, residual_like, vector_like
from ._plans import contiguous

# (plan, shape, dtype, strides, result's Desc) by (kind, axis, x's Desc, weight?, bias?, the
# residual's Desc or None): weight and bias are contiguous vectors of x's last dimension and dtype
# (vector_like makes them so).
_ENTRIES: dict = {}
_new = object.__new__


def _entry(key, kind, x: GPUArray, axis: int, weight, bias, residual):
    rt = x._rt
    src = x.reshape(1) if x.ndim == 0 else x  # a single element is a row of one
    w, b, r = (None if p is None else layout(p) for p in (weight, bias, residual))
    plan = rt.plan_nn_rows(kind, layout(src), axis, contiguous(x.dtype, src.shape), w, b, r)
    out = contiguous(x.dtype, x.shape)
    desc = desc_of(rt, out.dtype, out.shape, out.strides)
    entry = (plan, out.shape, out.dtype, out.strides, desc)
    if len(_ENTRIES) > 4096:
        _ENTRIES.clear()
    _ENTRIES[key] = entry
    return entry


# Calls whose arguments were checked before, by (kind, the axis argument, x's Desc, weight's and
# bias's Desc or None): the checks' outcome depends on nothing else, so a repeated call goes
# straight to its _ENTRIES entry. Only calls whose checks passed the arrays on unchanged (no
# conversion or copy), without a residual and with a float eps, are remembered.
_SEEN: dict = {}


def _call_key(kind: str, x, axis, weight=None, bias=None, eps=0.0, residual=None):
    if type(x) is not GPUArray or residual is not None or type(axis) is not int:
        return None
    if type(eps) is not float:
        return None
    key = [kind, axis, x._desc or describe(x)]
    for p in (weight, bias):
        if p is None:
            key.append(None)
        elif type(p) is GPUArray:
            key.append(p._desc or describe(p))
        else:
            return None
    return tuple(key)


def _launch(entry, x: GPUArray, weight, bias, eps) -> GPUArray:
    plan, shape, dtype, strides, desc = entry
    rt = x._rt
    args = [x._buf, x._offset]
    if weight is not None:
        args += (weight._buf, weight._offset)
    if bias is not None:
        args += (bias._buf, bias._offset)
    out = _new(GPUArray)
    out._buf = plan(rt.thread.stream, _quota.quota, *args, eps)
    out._offset, out._rt, out._desc, out._readonly = 0, rt, desc, False
    out._shape, out._dtype, out._strides = shape, dtype, strides
    return out


def _rows(kind: str, x: GPUArray, axis: int, weight=None, bias=None, eps=0.0, residual=None,
          seen=None):  # fmt: skip
    """The op on checked arguments; `seen`: the _SEEN key to remember the call under."""
    res_desc = None if residual is None else residual._desc or describe(residual)
    key = (kind, axis, x._desc or describe(x), weight is not None, bias is not None, res_desc)
    entry = _ENTRIES.get(key) or _entry(key, kind, x, axis, weight, bias, residual)
    if residual is not None:  # the plan returns (out, h)
        plan, shape, dtype, strides, desc = entry
        rt = x._rt
        args = [x._buf, x._offset]
        for p in (weight, bias, residual):
            if p is not None:
                args += (p._buf, p._offset)
        bufs = plan(rt.thread.stream, _quota.quota, *args, eps)
        return tuple(wrap(buf, shape, dtype, strides, rt, desc) for buf in bufs)
    if seen is not None:
        if len(_SEEN) > 4096:
            _SEEN.clear()
        _SEEN[seen] = entry
    return _launch(entry, x, weight, bias, eps)


def _axis(axis, x: GPUArray) -> int:
    if axis == -1 and type(axis) is int and x.ndim:
        return x.ndim - 1
    (axis,) = _shapes.normalize_axes(operator.index(axis), max(x.ndim, 1))
    return axis


def softmax(x, axis: int = -1) -> GPUArray:
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    return _softmax("softmax", x, axis)


def log_softmax(x, axis: int = -1) -> GPUArray:
    """x - max - log(sum(exp(x - max))) along `axis`."""
    return _softmax("log_softmax", x, axis)


def _softmax(kind: str, x, axis) -> GPUArray:
    call = _call_key(kind, x, axis)
    entry = _SEEN.get(call) if call is not None else None
    if entry is not None:
        return _launch(entry, x, None, None, 0.0)
    checked = float_array(x, kind)
    return _rows(kind, checked, _axis(axis, checked), seen=call if checked is x else None)


def layer_norm(x, weight=None, bias=None, eps: float = 1e-5, residual=None):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last dimension (the biased variance,
    as torch.nn.functional.layer_norm with normalized_shape = x.shape[-1:]). With `residual`
    (x's shape and dtype): h = x + residual (rounded to x's dtype) is normalized instead, and
    (output, h) is returned."""
    call = _call_key("layer_norm", x, -1, weight, bias, eps, residual)
    entry = _SEEN.get(call) if call is not None else None
    if entry is not None:
        return _launch(entry, x, weight, bias, eps)
    checked = float_array(x, "layer_norm")
    if checked.ndim == 0:
        raise ValueError("layer_norm: x must have at least one dimension, got shape ()")
    w = vector_like(weight, checked, "layer_norm", "weight")
    b = vector_like(bias, checked, "layer_norm", "bias")
    r = residual_like(residual, checked, "layer_norm")
    eps = real(eps, "layer_norm", "eps")
    unchanged = checked is x and w is weight and b is bias
    return _rows("layer_norm", checked, checked.ndim - 1, w, b, eps, r, call if unchanged else None)


def rms_norm(x, weight=None, eps: float = 1e-6, residual=None):
    """x / sqrt(mean(x**2) + eps) * weight over the last dimension (LLaMA's RMSNorm). With
    `residual` (x's shape and dtype): h = x + residual (rounded to x's dtype) is normalized
    instead, and (output, h) is returned, as a decoder's fused add-and-norm."""
    call = _call_key("rms_norm", x, -1, weight, None, eps, residual)
    entry = _SEEN.get(call) if call is not None else None
    if entry is not None:
        return _launch(entry, x, weight, None, eps)
    checked = float_array(x, "rms_norm")
    if checked.ndim == 0:
        raise ValueError("rms_norm: x must have at least one dimension, got shape ()")
    w = vector_like(weight, checked, "rms_norm", "weight")
    r = residual_like(residual, checked, "rms_norm")
    eps = real(eps, "rms_norm", "eps")
    unchanged = checked is x and w is weight
    return _rows(
        "rms_norm", checked, checked.ndim - 1, w, None, eps, r, call if unchanged else None
    )


__all__ = ["layer_norm", "log_softmax", "rms_norm", "softmax"]
