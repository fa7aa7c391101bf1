"""The row operations of gpukit.nn (softmax, log_softmax, layer_norm, rms_norm) in float64, the
reference of the row-kernel tests (through gpukit, and through the kernels' models)."""

import numpy as np


def rows_f64(kind, x, w=None, b=None, eps=1e-5, axis=-1):
    """`kind` of x along `axis` (the norms: the last), scaled by w and shifted by b when given."""
    x = x.astype(np.float64)
    if kind in ("softmax", "log_softmax"):
        m = x.max(axis=axis, keepdims=True)
        s = np.exp(x - m).sum(axis=axis, keepdims=True)
        return np.exp(x - m) / s if kind == "softmax" else (x - m) - np.log(s)
    if kind == "layer_norm":
        mu = x.mean(axis=-1, keepdims=True)
        y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    else:
        y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    y = y if w is None else y * w.astype(np.float64)
    return y if b is None else y + b.astype(np.float64)
