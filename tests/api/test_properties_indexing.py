"""Property tests of indexing, views and joins against NumPy through the public API: basic
indexing (negative steps, out-of-range slice bounds, None, '...') and views of views, reading and
writing through them; advanced indexing (integer arrays in and out of bounds, boolean masks,
mixed with slices); reshape, transpose, swapaxes, squeeze, expand_dims, concatenate, stack and
split. Values move without arithmetic, so every comparison is exact."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import DTYPES, arrays, basic_keys, property_test, shapes

import gpukit as gk


def _same(got, expected):
    assert isinstance(got, gk.GPUArray), type(got)
    result = got.to_numpy()
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    if result.dtype == gk.bfloat16:  # NumPy sees bfloat16's NaN as NaN only in float32
        result, expected = result.astype(np.float32), np.asarray(expected).astype(np.float32)
    np.testing.assert_array_equal(result, expected)  # NaN equals NaN here


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:
        return None, e


dtypes = st.sampled_from(DTYPES)


@property_test(80)
@given(data=st.data())
def test_views_of_views(backend, data):
    """Two basic keys in a row give NumPy's view; arithmetic on it and a copy of it too."""
    x = data.draw(arrays(data.draw(dtypes), shapes), label="x")
    a, view, ref = gk.asarray(x), None, x
    view = a
    for _ in range(2):
        key = data.draw(basic_keys(ref.shape), label="key")
        ref = ref[key]
        view = view[key]
        _same(view, ref)
    _same(view.copy(), ref.copy())
    _same(gk.ascontiguousarray(view), np.ascontiguousarray(ref))
    if ref.dtype.kind in "iuf" and ref.dtype.itemsize > 1:
        with np.errstate(all="ignore"):
            _same(view + view, ref + ref)  # strided operands of an elementwise op


@property_test(60)
@given(data=st.data())
def test_setitem_through_views(backend, data):
    """A write through a view (negative steps included) lands where NumPy's lands."""
    dtype = data.draw(dtypes, label="dtype")
    x = data.draw(arrays(dtype, shapes), label="x")
    key = data.draw(basic_keys(x.shape), label="key")
    target_shape = x[key].shape
    value_shape = data.draw(
        st.sampled_from([target_shape, target_shape[1:], (), (1,) * len(target_shape)]),
        label="value shape",
    )
    value = data.draw(arrays(dtype, value_shape), label="value")
    a, expected = gk.asarray(x), x.copy()
    expected[key] = value
    a[key] = value if data.draw(st.booleans(), label="numpy value") else gk.asarray(value)
    _same(a, expected)


@st.composite
def advanced_keys(draw, shape):
    """A key with one or two integer arrays (possibly out of bounds) or a boolean mask, mixed
    with slices and integers."""
    key, axis = [], 0
    while axis < len(shape):
        n = shape[axis]
        kind = draw(st.sampled_from(["slice", "int array", "mask", "int"]))
        if kind == "mask" and axis + 1 <= len(shape):
            width = draw(st.integers(1, len(shape) - axis))
            key.append(draw(arrays("bool", shape[axis : axis + width])))
            axis += width
            continue
        if kind == "int array":
            lo, hi = (-n, n - 1) if n else (-1, 0)
            if draw(st.integers(0, 9)) == 0:  # sometimes out of bounds
                lo, hi = -n - 2, n + 1
            index_shape = draw(st.sampled_from([(), (3,), (2, 2), (0,)]))
            index = np.asarray(draw(arrays("int64", index_shape, special=False)))
            key.append((index % (hi - lo + 1) + lo) if index.size else index)
        elif kind == "int" and n:
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(slice(None, None, draw(st.sampled_from([1, -1, 2]))))
        axis += 1
    return tuple(key)


@property_test(80)
@given(data=st.data())
def test_advanced_getitem(backend, data):
    x = data.draw(arrays(data.draw(dtypes), shapes.filter(lambda s: len(s) >= 1)), label="x")
    key = data.draw(advanced_keys(x.shape), label="key")
    expected, error = _outcome(lambda: x[key])
    device_key = tuple(
        gk.asarray(k) if isinstance(k, np.ndarray) and data.draw(st.booleans()) else k for k in key
    )
    if error is not None:
        with pytest.raises(type(error)):
            gk.asarray(x)[device_key]
        return
    _same(gk.asarray(x)[device_key], expected)


@property_test(60)
@given(data=st.data())
def test_advanced_setitem(backend, data):
    """a[key] = scalar for an advanced key (a scalar, so repeated indices agree)."""
    dtype = data.draw(dtypes, label="dtype")
    x = data.draw(arrays(dtype, shapes.filter(lambda s: len(s) >= 1)), label="x")
    key = data.draw(advanced_keys(x.shape), label="key")
    value = data.draw(arrays(dtype, ()), label="value")[()]
    expected = x.copy()
    _, error = _outcome(expected.__setitem__, key, value)
    a = gk.asarray(x)
    if error is not None:
        with pytest.raises(type(error)):
            a[key] = value
        _same(a, x)  # nothing was written
        return
    a[key] = value
    _same(a, expected)


@st.composite
def factorization(draw, size):
    """A shape of `size` elements (any number of dimensions; one may be -1)."""
    if size == 0:
        shape = [*draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)), 0]
        return tuple(draw(st.permutations(shape)))
    shape, rest = [], size
    while rest > 1:
        divisors = [d for d in range(2, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        shape.append(d)
        rest //= d
    shape += [1] * draw(st.integers(0, 2))
    shape = list(draw(st.permutations(shape)))
    if shape and draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    return tuple(shape)


@property_test(60)
@given(data=st.data())
def test_reshape_transpose(backend, data):
    """reshape of (possibly strided) views, transpose by a permutation, swapaxes, squeeze and
    expand_dims: NumPy's shapes and C-order values."""
    x = data.draw(arrays(data.draw(dtypes), shapes), label="x")
    a = gk.asarray(x)
    if x.ndim and data.draw(st.booleans(), label="strided"):
        a, x = a[::-1], x[::-1]
    perm = data.draw(st.permutations(range(x.ndim)), label="perm")
    _same(a.transpose(perm), x.transpose(perm))
    _same(gk.transpose(a), np.transpose(x))
    target = data.draw(factorization(x.size), label="shape")
    _same(a.T.reshape(target), x.T.reshape(target))
    if x.ndim >= 2:
        i, j = data.draw(st.integers(-x.ndim, x.ndim - 1)), data.draw(st.integers(0, x.ndim - 1))
        _same(gk.swapaxes(a, i, j), np.swapaxes(x, i, j))
    _same(gk.squeeze(a), np.squeeze(x))
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="new axis")
    _same(gk.expand_dims(a, axis), np.expand_dims(x, axis))


@property_test(60)
@given(data=st.data())
def test_concatenate_stack_split(backend, data):
    """Joins of 1-3 arrays of drawn dtypes (promoted as NumPy does; bfloat16 left out here, as
    NumPy cannot promote it) along any axis, and splits back."""
    shape = data.draw(shapes.filter(lambda s: len(s) >= 1), label="shape")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    parts = []
    for _ in range(data.draw(st.integers(1, 3))):
        part_shape = list(shape)
        part_shape[axis] = data.draw(st.integers(0, 3))
        dtype = data.draw(st.sampled_from([d for d in DTYPES if d != "bfloat16"]))
        parts.append(data.draw(arrays(dtype, tuple(part_shape))))
    joined = np.concatenate(parts, axis=axis)
    _same(gk.concatenate([gk.asarray(p) for p in parts], axis=axis), joined)
    _same(gk.concatenate([gk.asarray(p) for p in parts], axis=None), np.concatenate(parts, None))
    same = [p for p in parts if p.shape == parts[0].shape]
    stack_axis = data.draw(st.integers(-len(shape) - 1, len(shape)), label="stack axis")
    _same(gk.stack([gk.asarray(p) for p in same], stack_axis), np.stack(same, stack_axis))
    cuts = sorted(data.draw(st.lists(st.integers(0, joined.shape[axis]), max_size=3)))
    for got, want in zip(
        gk.split(gk.asarray(joined), cuts, axis), np.split(joined, cuts, axis), strict=True
    ):
        _same(got, want)
