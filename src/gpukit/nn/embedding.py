"""Embedding lookup: rows of a table by integer ids."""

from __future__ import annotations

import numpy as np

from ..array import GPUArray, asarray, operands
from ._checks import float_array, same_device
from ._plans import contiguous, describe, layout, result, run


def embedding(ids, table, check: bool = True) -> GPUArray:
    """table[ids]: shape ids.shape + (dim,) for a (num, dim) table. An id outside [0, num) is
    never read: its row is zeros, and with `check` (the default) IndexError is raised, which
    waits for the lookup to finish (a read back of an error flag; inside a graph capture that is
    a GraphCaptureError). check=False reads nothing back: for ids known to be in range, e.g.
    checked on the host before they were copied, or made on the device by a sampler over the
    table's rows, as gpukit.models does."""
    table = float_array(table, "embedding", "table")
    if not isinstance(ids, GPUArray):
        (ids,), _ = operands(ids)
        ids = ids if isinstance(ids, GPUArray) else asarray(ids, rt=table._rt)
    same_device("embedding", ids, table)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: ids must be an integer array, got {ids.dtype.name}")
    if table.ndim != 2:
        raise ValueError(f"embedding: table must be 2-D (num, dim), got shape {table.shape}")
    rt = table._rt
    out = contiguous(table.dtype, (*ids.shape, table.shape[1]))
    if out.size == 0:
        if ids.size and table.shape[0] == 0:
            raise IndexError("embedding: the table has no rows")
        return result(rt.pool.allocate(0, rt.stream), out, rt)
    ids = ids if ids.is_contiguous else ids.copy()
    key = ("embedding", rt, *describe(ids, table))
    buf, flag = run(key, lambda: rt.plan_embedding(layout(ids), layout(table), out), rt, ids, table)
    if not check:
        return result(buf, out, rt)
    bad = np.empty(1, np.int32)
    rt.download(bad, flag, 0)  # waits for the lookup, as NumPy's take would raise now
    if bad[0]:
        raise IndexError(f"embedding: an id is out of range for a table of {table.shape[0]} rows")
    return result(buf, out, rt)
