"""Embedding lookup: rows of a table by integer ids."""

from __future__ import annotations

from ..array import GPUArray, _operands, asarray, empty
from ._checks import float_array, same_device


def embedding(ids, table) -> GPUArray:
    """table[ids]: shape ids.shape + (dim,) for a (num, dim) table. An id outside [0, num) raises
    IndexError (on the GPU this waits for the lookup to finish)."""
    table = float_array(table, "embedding", "table")
    if not isinstance(ids, GPUArray):
        (ids,), _ = _operands(ids)
        ids = ids if isinstance(ids, GPUArray) else asarray(ids, rt=table._rt)
    same_device("embedding", ids, table)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: ids must be an integer array, got {ids.dtype.name}")
    if table.ndim != 2:
        raise ValueError(f"embedding: table must be 2-D (num, dim), got shape {table.shape}")
    out = empty((*ids.shape, table.shape[1]), table.dtype, table._rt)
    if out.size:
        ids = ids if ids.is_contiguous else ids.copy()
        table._rt.embedding(ids, table, out)
    elif ids.size and table.shape[0] == 0:
        raise IndexError("embedding: the table has no rows")
    return out
