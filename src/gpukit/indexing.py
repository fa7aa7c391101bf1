"""Advanced indexing with NumPy's rules: integer arrays (broadcast together, mixed with slices,
integers, None and '...'), boolean masks, and `take`, `nonzero`, `flatnonzero`.

A key is split into a basic view (slices, integers, None) and the advanced part: one int64 index
array per indexed dimension of that view. Boolean masks become the index arrays of their
nonzero coordinates. Index arrays from the host are checked here, before they are uploaded;
those already on the device are checked by the kernel, which never reads out of bounds and flags
the array that held a bad index (one device-to-host read of the flag)."""

from __future__ import annotations

import operator

import numpy as np

from .array import GPUArray, asarray, cached_plan, empty, is_basic, layout, wrap
from .base import shapes as _shapes
from .reductions import max as _max
from .reductions import min as _min
from .runtime.backend import Layout
from .runtime.quota import local as _quota

_INT64 = np.dtype("int64")
_new = object.__new__


def _classify(k):
    """('basic', k), ('bool', value), ('int', array) or ('mask', array) for one key entry."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return "basic", k
    if isinstance(k, (bool, np.bool_)):
        return "bool", bool(k)
    if isinstance(k, (int, np.integer)):
        return "basic", operator.index(k)
    if isinstance(k, GPUArray):
        arr = k
    elif isinstance(k, (list, tuple, np.ndarray)):
        arr = np.asarray(k)
        if arr.size == 0 and arr.dtype.kind not in "biu":
            arr = arr.astype(_INT64)  # [] indexes nothing, as in NumPy
    else:
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
            f"or boolean arrays are valid indices, not {type(k).__name__}"
        )
    if arr.dtype == np.bool_:
        if arr.ndim == 0:
            return "bool", bool(arr.item())
        return "mask", arr
    if arr.dtype.kind not in "iu":
        raise IndexError(
            f"arrays used as indices must be of integer (or boolean) type, not {arr.dtype.name}"
        )
    return "int", arr


def _out_of_bounds(values: np.ndarray, size: int, axis) -> IndexError:
    bad = values[(values < -size) | (values >= size)].reshape(-1)[0]
    return IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")


def _nonzero_coords(mask) -> list:
    """The coordinate arrays of a mask's true elements (NumPy arrays for a host mask)."""
    if isinstance(mask, GPUArray):
        coords = _coordinates(mask)
        return [coords[k] for k in range(mask.ndim)]
    return list(np.nonzero(mask))


class _Advanced:
    """A key resolved against an array: the basic view, and per index array its dimension in the
    view, the original axis (for messages) and the array (host or device)."""

    def __init__(self, a: GPUArray, key):
        entries = [_classify(k) for k in (key if isinstance(key, tuple) else (key,))]
        self.any = any(kind != "basic" for kind, _ in entries)
        if not self.any:
            return
        consumed = sum(
            v.ndim if kind == "mask" else 1
            for kind, v in entries
            if kind in ("int", "mask") or (kind == "basic" and v is not None and v is not Ellipsis)
        )
        ellipses = [i for i, (kind, v) in enumerate(entries) if kind == "basic" and v is Ellipsis]
        if len(ellipses) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if consumed > a.ndim:
            raise IndexError(
                f"too many indices for array: array is {a.ndim}-dimensional, but {consumed} "
                "were indexed"
            )
        fill = [("basic", slice(None))] * (a.ndim - consumed)
        if ellipses:
            at = ellipses[0]
            entries = entries[:at] + fill + entries[at + 1 :]
        else:
            entries = entries + fill
        basic, self.arrays, self.positions, self.axes = [], [], [], []
        axis = 0
        for kind, v in entries:
            if kind == "basic" and not isinstance(v, int):
                basic.append(v)
                axis += v is not None
                continue
            position = len([k for k in basic if not isinstance(k, int)])
            if kind == "bool":  # a 0-d mask: a new dimension, kept (index 0) or emptied
                basic.append(None)
                self._add(np.zeros(int(v), _INT64), position, None)
            elif kind == "basic":  # an integer beside index arrays is a 0-d index array
                basic.append(slice(None))
                self._add(np.asarray(v, _INT64), position, axis)
                axis += 1
            elif kind == "int":
                basic.append(slice(None))
                self._add(v, position, axis)
                axis += 1
            else:
                for j, (n, m) in enumerate(zip(a.shape[axis:], v.shape, strict=False)):
                    if n != m:
                        raise IndexError(
                            f"boolean index did not match indexed array along axis {axis + j}; "
                            f"size of axis is {n} but size of corresponding boolean axis is {m}"
                        )
                for j, coords in enumerate(_nonzero_coords(v)):
                    basic.append(slice(None))
                    self._add(coords, position + j, axis + j, checked=True)
                axis += v.ndim
        shape, strides, offset = _shapes.basic_index(a.shape, a.strides, tuple(basic))
        self.view = a._view(shape, strides, a._offset + offset)
        try:
            self.index_shape = _shapes.broadcast(*(x.shape for x in self.arrays))
        except ValueError:
            shapes = " ".join(str(tuple(x.shape)) for x in self.arrays)
            raise IndexError(
                f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                f"{shapes}"
            ) from None
        self._layout()

    def _add(self, arr, position: int, axis, checked: bool = False) -> None:
        self.arrays.append(arr)
        self.positions.append(position)
        self.axes.append((axis, checked))

    def _layout(self) -> None:
        """NumPy's placement: the broadcast index dimensions replace the indexed ones where those
        are adjacent, and come first when a slice (or None) separates them."""
        view, pos = self.view, self.positions
        rest = [d for d in range(view.ndim) if d not in pos]
        index_dims = [("b", j) for j in range(len(self.index_shape))]
        if pos == list(range(pos[0], pos[0] + len(pos))):
            self.layout = (
                [("v", d) for d in rest if d < pos[0]]
                + index_dims
                + [("v", d) for d in rest if d > pos[-1]]
            )
        else:
            self.layout = index_dims + [("v", d) for d in rest]
        self.shape = tuple(
            view.shape[d] if kind == "v" else self.index_shape[d] for kind, d in self.layout
        )

    def device_indices(self) -> tuple[list[GPUArray], bool]:
        """The index arrays as int64 GPUArrays, and whether any still needs a bounds check
        (those given on the host are checked here)."""
        rt, out, unchecked = self.view._rt, [], False
        for arr, pos, (axis, checked) in zip(self.arrays, self.positions, self.axes, strict=True):
            size = self.view.shape[pos]
            if isinstance(arr, GPUArray):
                if arr._rt is not rt:
                    raise ValueError(
                        f"arrays are on different devices: {arr.device} and {self.view.device}"
                    )
                unchecked |= not checked
                out.append(arr.astype(_INT64, copy=False))
                continue
            if arr.size and (arr.min() < -size or arr.max() >= size):
                raise _out_of_bounds(arr, size, axis)
            out.append(asarray(np.ascontiguousarray(arr, _INT64), rt=rt))
        return out, unchecked

    def raise_bad(self, k: int, indices: list[GPUArray]):
        axis, _ = self.axes[k]
        raise _out_of_bounds(indices[k].to_numpy(), self.view.shape[self.positions[k]], axis)


def _coordinates(mask: GPUArray) -> GPUArray:
    """The int64 (ndim, count) coordinates of a bool array's true elements."""
    if not mask.is_contiguous:
        mask = mask.copy()
    rt = mask._rt
    buf, count = rt.nonzero(layout(mask), mask._buf, mask._offset, rt.stream, _quota.quota)
    return wrap(buf, (mask.ndim, count), _INT64, (8 * count, 8), rt)


def _gather(adv, indices, check: bool, values: GPUArray | None = None):
    """out = view[idx] (a new array, and the bad-index flag with `check`), or with `values`
    view[idx] = values (contiguous, adv.shape)."""
    view, rt = adv.view, adv.view._rt
    scatter = values is not None
    key = ["gather", rt, scatter, check, view.dtype, view.shape, view.strides, layout(view).align]
    key += [(x.shape, x.strides) for x in indices]
    key += (tuple(adv.positions), tuple(adv.layout))
    out = Layout(view.dtype, adv.shape, _shapes.contiguous_strides(adv.shape, view.itemsize))
    plan = cached_plan(
        tuple(key),
        lambda: rt.plan_gather(
            layout(view), out, tuple(layout(x) for x in indices), tuple(adv.positions),
            tuple(adv.layout), check, scatter,
        ),
    )  # fmt: skip
    args = [view._buf, view._offset]
    if scatter:
        args += (values._buf, values._offset)
    for x in indices:
        args += (x._buf, x._offset)
    return plan(rt.thread.stream, _quota.quota, *args), out


def getitem(a: GPUArray, key) -> GPUArray:
    """a[key] for any key: a view for basic indexing, a new array for advanced indexing."""
    shape = a._shape
    if type(key) is slice and shape:  # the common view, computed here from the slots
        strides = a._strides
        step_bytes = strides[0]
        start, stop, step = key.indices(shape[0])
        count = len(range(start, stop, step))
        v = _new(GPUArray)
        # An empty slice moves nothing (its start can be -1: a[::-1] of size 0).
        v._offset = a._offset + start * step_bytes if count else a._offset
        v._buf, v._desc, v._rt, v._dtype, v._readonly = a._buf, None, a._rt, a._dtype, a._readonly
        v._shape = (count, *shape[1:])
        v._strides = (step_bytes * step if count > 1 else step_bytes, *strides[1:])
        return v
    if is_basic(key):
        return a._basic_getitem(key)
    adv = _Advanced(a, key)
    if not adv.any:
        return a._view(*_basic(a, key))
    indices, unchecked = adv.device_indices()
    made, out = _gather(adv, indices, unchecked)
    rt = a._rt
    if unchecked:
        buf, flag = made
        found = np.empty(1, np.int32)
        rt.download(found, flag, 0)
        if found[0]:
            adv.raise_bad(int(found[0]) - 1, indices)
    else:
        buf = made
    return wrap(buf, out.shape, out.dtype, out.strides, rt)


def setitem(a: GPUArray, key, value) -> None:
    """a[key] = value (value broadcast to a[key]'s shape and cast to a's dtype; with repeated
    advanced indices one of the values lands)."""
    a.check_writable()
    if is_basic(key):
        a._basic_getitem(key)._assign(value)
        return
    adv = _Advanced(a, key)
    if not adv.any:
        a._basic_getitem(key)._assign(value)
        return
    indices, unchecked = adv.device_indices()
    if unchecked:  # check before writing anything
        for k, idx in enumerate(indices):
            size = adv.view.shape[adv.positions[k]]
            if idx.size and (int(_min(idx)) < -size or int(_max(idx)) >= size):
                adv.raise_bad(k, indices)
    values = empty(adv.shape, a.dtype, a._rt)
    values[...] = value
    _gather(adv, indices, False, values)


GPUArray.__getitem__ = getitem
GPUArray.__setitem__ = setitem


def _basic(a: GPUArray, key):
    shape, strides, offset = _shapes.basic_index(a.shape, a.strides, key)
    return shape, strides, a._offset + offset


def take(a, indices, axis=None) -> GPUArray:
    """Elements of `a` at `indices` along `axis` (of the flattened array when None)."""
    a = asarray(a)
    if axis is None:
        return getitem(a.reshape(-1), (_as_index(indices),))
    (axis,) = _shapes.normalize_axes(axis, a.ndim)
    return getitem(a, (slice(None),) * axis + (_as_index(indices),))


def _as_index(indices):
    """take's indices are always integer arrays (an int gives a 0-d result)."""
    if isinstance(indices, GPUArray):
        return indices
    arr = np.asarray(indices)
    if arr.dtype == np.bool_ or (arr.size and arr.dtype.kind not in "iu"):
        raise TypeError(f"take needs integer indices, not {arr.dtype.name}")
    return arr.astype(_INT64) if arr.dtype.kind not in "iu" else arr


def nonzero(a) -> tuple[GPUArray, ...]:
    """Indices of the nonzero elements, one int64 array per dimension."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use atleast_1d(a) first")
    mask = a if a.dtype == np.bool_ else a != 0
    coords = _coordinates(mask)
    return tuple(coords[k] for k in range(a.ndim))


def flatnonzero(a) -> GPUArray:
    """Indices of the nonzero elements of the flattened array."""
    return nonzero(asarray(a).reshape(-1))[0]
