"""Element strides for kernels: operands broadcast to an output shape, dimensions merged where
memory allows, so that kernels do as little index arithmetic as possible."""

from __future__ import annotations


def element_strides(arr, shape) -> tuple[int, ...]:
    """`arr`'s strides in elements when read as `shape` (0 along broadcast dimensions)."""
    item = arr.dtype.itemsize
    pad = len(shape) - arr.ndim
    out = [0] * pad
    for n, s, t in zip(arr.shape, arr.strides, shape[pad:], strict=True):
        out.append(s // item if n == t and n != 1 else 0)
    return tuple(out)


def matrix_strides(arr) -> tuple[int, int]:
    """(row stride, matrix stride) in elements of a stack of matrices (the last two axes) whose
    matrices lie one stride apart; 0 for the matrix stride of a single matrix."""
    st = [s // arr.dtype.itemsize for s in arr.strides]
    return st[-2], (st[-3] if arr.ndim > 2 else 0)


def collapse(shape, strides_per_operand):
    """Drops size-1 dimensions and merges neighbours that every operand walks contiguously.
    Returns (shape, [strides of each operand]) with the same element order."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    out_shape = [shape[i] for i in dims]
    out_strides = [[s[i] for i in dims] for s in strides_per_operand]
    i = len(out_shape) - 1
    while i > 0:
        if all(s[i - 1] == s[i] * out_shape[i] for s in out_strides):
            out_shape[i - 1] *= out_shape[i]
            del out_shape[i]
            for s in out_strides:
                s[i - 1] = s[i]
                del s[i]
        i -= 1
    return out_shape, out_strides


def contiguous_like(batch, m: int, n: int) -> tuple[int, ...]:
    """Element strides of a C-contiguous (*batch, m, n) array."""
    strides, step = [], 1
    for d in reversed((*batch, m, n)):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))
