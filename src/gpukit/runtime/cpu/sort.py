"""The CPU backend's sorting primitives, by NumPy, with the GPU kernels' results: stable sorts
with NaN last and -0.0 equal to +0.0. NumPy cannot order bfloat16, so it is sorted and searched
as float32, which holds it exactly."""

from __future__ import annotations

import numpy as np

from ...base.dtypes import bfloat16


def orderable(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == bfloat16 else x


def argsort_rows(s: np.ndarray, descending: bool) -> np.ndarray:
    """Stable order along the last axis; descending keeps ties in input order."""
    keyed = orderable(s)
    if not descending:
        return np.argsort(keyed, axis=-1, kind="stable")
    n = s.shape[-1]  # the reversed input's stable order, reversed
    return n - 1 - np.flip(np.argsort(np.flip(keyed, -1), axis=-1, kind="stable"), -1)


def searchsorted(a, v, right: bool, sorter, out, flag) -> None:
    """out = insertion points of v in a (or a[sorter]); flag[0] = 1 when sorter is out of range."""
    if sorter is not None:
        flag[0] = int(bool(sorter.size) and (sorter.min() < 0 or sorter.max() >= a.size))
        if flag[0]:
            return
    side = "right" if right else "left"
    out[...] = np.searchsorted(orderable(a), orderable(v), side=side, sorter=sorter)


def unique(v, index: bool, inverse: bool, counts: bool, equal_nan: bool) -> list:
    """[values, first indices, inverse, counts] (None where not asked) of 1-D v."""
    # return_index always: NumPy then sorts stably. Its default sort of float16 with negative
    # NaNs can leave values out of order (NumPy 2.4), and unique with it.
    values, first, *rest = np.unique(
        orderable(v), return_index=True, return_inverse=inverse, return_counts=counts,
        equal_nan=equal_nan,
    )  # fmt: skip
    out = [values.astype(v.dtype), first if index else None]
    out += [rest.pop(0) if want else None for want in (inverse, counts)]
    return out


def bins_of(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin k of each value: edges[k] <= value < edges[k+1], the last bin closed; nbins for NaN
    and values outside."""
    nbins = edges.size - 1
    b = np.searchsorted(edges, x, side="right") - 1
    b[x == edges[-1]] = nbins - 1
    outside = (x < edges[0]) | (x > edges[-1])
    if x.dtype.kind == "f":
        outside |= np.isnan(x)
    b[outside] = nbins
    return b
