"""Sorting on CUDA (kernels/sort.cu, kernels/search.cu): sort_plan's launches as gpukit._core
Plans. Only unique reads anything back mid-way (how many distinct values there are)."""

from __future__ import annotations

import numpy as np

from .. import capture, sort_plan
from ..backend import Layout
from .elementwise import emit_fill_zero
from .plans import PlanBuilder

_I32, _I64, _F64 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float64)
_BLOCK = sort_plan.SEARCH_THREADS


def _function(backend, file: str, defines: tuple, name: str, shared: int) -> int:
    fn = backend.function(file, defines, name)
    if shared:
        backend.allow_shared(fn, shared)
    return fn


def _builder(backend, arguments: str, outputs: list, sp: sort_plan.SortPlan, extra_scratch=()):
    """A PlanBuilder whose scratch is sp's (named, in order) then `extra_scratch` (bytes)."""
    scratch = [*sp.scratch.values(), *extra_scratch]
    b = PlanBuilder(backend, arguments, outputs=outputs, scratch=scratch)
    names = {name: b.scratch_arg(i) for i, name in enumerate(sp.scratch)}
    return b, names


def emit_sort(backend, b: PlanBuilder, sp: sort_plan.SortPlan, bind: dict) -> None:
    """Appends sp's launches to b; `bind`: the plan's buffer names -> argument numbers."""
    for x in sp.launches:
        fn = _function(backend, sp.file, sp.defines, x.kernel, x.shared)
        fields = {k: v for k, v in x.args.items() if isinstance(v, int)}
        addresses = [(k, bind[v], 0, 1) for k, v in x.args.items() if isinstance(v, str)]
        b.launch(fn, x.grid, x.block, "gk_sort_args", fields, shared=x.shared,
                 addresses=addresses)  # fmt: skip


def plan_sort(backend, src: Layout, keys: bool, index: bool, descending: bool):
    """Args: src (contiguous; its last axis is sorted, stably). Allocates the sorted keys and / or
    the int64 index of each within its row (both: a tuple)."""
    n = src.shape[-1] if src.ndim else 1
    rows = src.size // n if n else 0
    sp = sort_plan.plan_sort(rows, n, src.dtype, want_keys=keys, want_index=index,
                             descending=descending, sm_count=backend.sm_count)  # fmt: skip
    outputs = ([src.size * src.dtype.itemsize] if keys else []) + ([src.size * 8] if index else [])
    b, bind = _builder(backend, "a", outputs, sp)
    bind["keys_in"] = 0
    if keys:
        bind["keys_out"] = b.output(0)
    if index:
        bind["vals_out"] = b.output(1 if keys else 0)
    emit_sort(backend, b, sp, bind)
    return b.build()


def plan_searchsorted(backend, a: Layout, v: Layout, right: bool, sorter: Layout | None):
    """Args: a, v (contiguous, one dtype) and the sorter (contiguous int64) when given.
    Allocates the int64 insertion points (v's size) and, with a sorter, an int32 flag set when
    it holds an index out of range."""
    outputs = [v.size * 8] + ([4] if sorter is not None else [])
    b = PlanBuilder(backend, "aa" if sorter is None else "aaa", outputs=outputs)
    if sorter is not None:
        emit_fill_zero(b, Layout(_I32, (1,), (4,)), b.output(1))
    if v.size:
        file, defines = sort_plan.search_defines(a.dtype)
        fn = backend.function(file, defines, "gk_searchsorted")
        addresses = [("sorted", 0, 0, 1), ("queries", 1, 0, 1), ("out", b.output(0), 0, 1)]
        if sorter is not None:
            addresses += [("sorter", 2, 0, 1), ("err", b.output(1), 0, 1)]
        fields = {"n": a.size, "m": v.size, "right": int(right)}
        b.launch(fn, backend.blocks_for(v.size, _BLOCK), _BLOCK, "gk_search_args", fields,
                 addresses=addresses)  # fmt: skip
    return b.build()


_UNIQUE_FIRST: dict = {}


def _unique_first_plan(backend, x: Layout, perm: bool, equal_nan: bool):
    """Args: x (contiguous, 1-D). Allocates the sorted keys, their positions (with `perm`), the
    scanned run counts per tile (the total last) and the run-start flags (a word per warp and
    item)."""
    key = (id(backend), x.dtype, x.size, perm, equal_nan)
    found = _UNIQUE_FIRST.get(key)
    if found is not None:
        return found
    n = x.size
    tiles = sort_plan.unique_tiles(n)
    sp = sort_plan.plan_sort(1, n, x.dtype, want_index=perm, sm_count=backend.sm_count)
    outputs = [n * x.dtype.itemsize] + ([n * 8] if perm else []) + [(tiles + 1) * 8]
    outputs.append(tiles * sort_plan.UNIQUE_TILE // 32 * 4)
    b, bind = _builder(backend, "a", outputs, sp)
    bind.update(keys_in=0, keys_out=b.output(0))
    if perm:
        bind["vals_out"] = b.output(1)
    emit_sort(backend, b, sp, bind)
    counts, flags = b.output(len(outputs) - 2), b.output(len(outputs) - 1)
    file, defines = sort_plan.search_defines(x.dtype)
    addresses = [("keys", b.output(0), 0, 1), ("tile_counts", counts, 0, 1)]
    addresses.append(("run_flags", flags, 0, 1))
    if perm:
        addresses.append(("perm", b.output(1), 0, 1))
    fields = {"n": n, "nan_distinct": int(not equal_nan)}
    for kernel, grid in (("gk_unique_count", tiles), ("gk_unique_scan", 1)):
        fn = backend.function(file, defines, kernel)
        b.launch(fn, grid, _BLOCK, "gk_unique_args", fields, addresses=addresses)
    if len(_UNIQUE_FIRST) > 256:
        _UNIQUE_FIRST.clear()
    _UNIQUE_FIRST[key] = b.build()
    return _UNIQUE_FIRST[key]


_UNIQUE_WRITE: dict = {}


def _unique_write_plan(backend, x: Layout, total: int, index: bool, inverse: bool, counts: bool,
                       equal_nan: bool):  # fmt: skip
    """Args: the sorted keys, their positions (when index or inverse), the scanned tile counts
    and the run-start flags. Allocates the values, then the first indices, inverse and counts
    that are asked."""
    key = (id(backend), x.dtype, x.size, total, index, inverse, counts, equal_nan)
    found = _UNIQUE_WRITE.get(key)
    if found is not None:
        return found
    n = x.size
    perm = index or inverse
    tiles = sort_plan.unique_tiles(n)
    item = x.dtype.itemsize
    outputs = [total * item] + ([total * 8] if index else []) + ([n * 8] if inverse else [])
    outputs += [total * 8] if counts else []
    b = PlanBuilder(backend, "aaaa" if perm else "aaa", outputs=outputs,
                    scratch=[total * 8] if counts else [])  # fmt: skip
    addresses = [("keys", 0, 0, 1), ("tile_counts", 2 if perm else 1, 0, 1)]
    addresses.append(("run_flags", 3 if perm else 2, 0, 1))
    addresses.append(("values", b.output(0), 0, 1))
    if perm:
        addresses.append(("perm", 1, 0, 1))
    at = 1
    for name, want in (("index", index), ("inverse", inverse), ("counts", counts)):
        if want:
            addresses.append((name, b.output(at), 0, 1))
            at += 1
    if counts:
        addresses.append(("starts", b.scratch_arg(0), 0, 1))
    file, defines = sort_plan.search_defines(x.dtype)
    fields = {"n": n, "n_unique": total, "nan_distinct": int(not equal_nan)}
    fn = backend.function(file, defines, "gk_unique_write")
    b.launch(fn, tiles, _BLOCK, "gk_unique_args", fields, addresses=addresses)
    if counts and total:
        fn = backend.function(file, defines, "gk_unique_counts")
        b.launch(fn, backend.blocks_for(total, _BLOCK), _BLOCK, "gk_unique_args", fields,
                 addresses=addresses)  # fmt: skip
    if len(_UNIQUE_WRITE) > 256:
        _UNIQUE_WRITE.clear()
    _UNIQUE_WRITE[key] = b.build()
    return _UNIQUE_WRITE[key]


def unique(backend, x: Layout, buffer, offset: int, index: bool, inverse: bool, counts: bool,
           equal_nan: bool, stream, quota):  # fmt: skip
    """(values, first indices, inverse, counts, how many): buffers of the distinct values of
    contiguous 1-D x, None where not asked. The count is read back to the host once."""
    capture.refuse("unique (the number of values sizes the result)")
    n = x.size
    if n == 0:
        made = [
            backend.pool.allocate(0, stream, quota) if w else None
            for w in (1, index, inverse, counts)
        ]
        return (*made, 0)
    perm = index or inverse
    first = _unique_first_plan(backend, x, perm, equal_nan)(stream, quota, buffer, offset)
    keys, *rest = first
    order = rest[0] if perm else None
    tile_counts, run_flags = rest[-2], rest[-1]
    tiles = sort_plan.unique_tiles(n)
    total = np.empty(1, _I64)
    backend.download(total, tile_counts, 8 * tiles)
    total = int(total[0])
    write = _unique_write_plan(backend, x, total, index, inverse, counts, equal_nan)
    args = [keys, 0] + ([order, 0] if perm else []) + [tile_counts, 0, run_flags, 0]
    made = write(stream, quota, *args)
    made = list(made) if isinstance(made, tuple) else [made]
    out = [made.pop(0)]
    out += [made.pop(0) if want else None for want in (index, inverse, counts)]
    return (*out, total)


def plan_histogram(backend, x: Layout, edges: Layout, counts: bool, bins: bool):
    """Args: x (contiguous, the edges' dtype), edges (contiguous, increasing). Allocates the
    int64 counts per bin and / or each value's bin (nbins for NaN and values outside)."""
    nbins = edges.size - 1
    outputs = ([nbins * 8] if counts else []) + ([x.size * 8] if bins else [])
    b = PlanBuilder(backend, "aa", outputs=outputs)
    if counts:
        emit_fill_zero(b, Layout(_I64, (nbins,), (8,)), b.output(0))
    if x.size:
        shared = sort_plan.histogram_shared(nbins) if counts else 0
        file, defines = sort_plan.search_defines(x.dtype)
        fn = _function(backend, file, defines, "gk_histogram", shared)
        addresses = [("x", 0, 0, 1), ("edges", 1, 0, 1)]
        if counts:
            addresses.append(("counts", b.output(0), 0, 1))
        if bins:
            addresses.append(("bins", b.output(1 if counts else 0), 0, 1))
        fields = {"n": x.size, "nbins": nbins, "shared_bins": int(shared > 0)}
        b.launch(fn, backend.blocks_for(x.size, _BLOCK), _BLOCK, "gk_hist_args", fields,
                 shared=shared, addresses=addresses)  # fmt: skip
    return b.build()


def plan_bincount(backend, x: Layout, nbins: int, weights: Layout | None):
    """Args: x (contiguous int64 in [0, nbins)) and the weights (contiguous float64) when given.
    Allocates the int64 counts, or the float64 sums of the weights per bin: (bin, weight) pairs
    sorted by bin, then each bin's run summed in a fixed order (the same bits on every run)."""
    n = x.size
    file, defines = sort_plan.search_defines(_I64)
    if weights is None:
        b = PlanBuilder(backend, "a", outputs=[nbins * 8])
        emit_fill_zero(b, Layout(_I64, (nbins,), (8,)), b.output(0))
        if n:
            shared = sort_plan.histogram_shared(nbins)
            fn = _function(backend, file, defines, "gk_bincount", shared)
            fields = {"n": n, "nbins": nbins, "shared_bins": int(shared > 0)}
            b.launch(
                fn,
                backend.blocks_for(n, _BLOCK),
                _BLOCK,
                "gk_hist_args",
                fields,
                shared=shared,
                addresses=[("x", 0, 0, 1), ("counts", b.output(0), 0, 1)],
            )
        return b.build()
    if n == 0:
        b = PlanBuilder(backend, "aa", outputs=[nbins * 8])
        emit_fill_zero(b, Layout(_F64, (nbins,), (8,)), b.output(0))
        return b.build()
    sp = sort_plan.plan_sort(1, n, np.dtype(np.uint64), want_index=True,
                             sm_count=backend.sm_count, key_bits=sort_plan.sort_bits_for(nbins),
                             values_in=True)  # fmt: skip
    b, bind = _builder(backend, "aa", [nbins * 8], sp, extra_scratch=[n * 8, n * 8])
    sorted_bins, sorted_weights = b.scratch_arg(len(sp.scratch)), b.scratch_arg(len(sp.scratch) + 1)
    bind.update(keys_in=0, vals_in=1, keys_out=sorted_bins, vals_out=sorted_weights)
    emit_sort(backend, b, sp, bind)
    fn = backend.function(file, defines, "gk_bin_sums")
    addresses = [("x", sorted_bins, 0, 1), ("weights", sorted_weights, 0, 1)]
    addresses.append(("sums", b.output(0), 0, 1))
    b.launch(fn, min(nbins, 65535), _BLOCK, "gk_hist_args", {"n": n, "nbins": nbins},
             addresses=addresses)  # fmt: skip
    return b.build()
