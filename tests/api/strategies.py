"""Hypothesis settings and strategies shared by the property tests (tests/api/test_properties_*).

The examples are derandomized (the same list every run, so CI is reproducible and bounded);
GPUKIT_TEST_SEED, when set, draws another list from that seed instead (the seed sweep explores
with it); GPUKIT_PROPERTY_EXAMPLES multiplies every test's example count (e.g. 10 for a long
local run)."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpukit as gk

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
DTYPES = ("bool", *INTS, *FLOATS)

_SEED = os.environ.get("GPUKIT_TEST_SEED")
_SCALE = float(os.environ.get("GPUKIT_PROPERTY_EXAMPLES", "1"))


def property_test(max_examples: int):
    """settings for one property test: a bounded, reproducible example list."""

    def apply(test):
        test = settings(
            max_examples=max(1, int(max_examples * _SCALE)),
            derandomize=_SEED is None,
            database=None,
            deadline=None,
            print_blob=False,
            # `backend` is function scoped but only selects a backend: sharing it is right.
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )(test)
        return test if _SEED is None else hypothesis_seed(int(_SEED))(test)

    return apply


def resolution(dtype) -> float:
    """The smallest step of a float dtype (its smallest subnormal): a result below it cannot be
    represented, so an absolute error of that much is in the dtype, not in the computation."""
    import ml_dtypes

    return float(ml_dtypes.finfo(np.dtype(dtype)).smallest_subnormal)


def np_dtype(name: str) -> np.dtype:
    return gk.bfloat16 if name == "bfloat16" else np.dtype(name)


shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)


def elements(dtype: np.dtype, *, special: bool = True, magnitude: float = 100.0):
    """Values of `dtype`: the whole range for integers; for floats, moderate values (so that one
    op stays finite in float16) with +-0, NaN and +-inf when `special`."""
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    width = 16 if dtype == np.float16 else 32 if dtype in (np.float32, gk.bfloat16) else 64
    values = st.floats(-magnitude, magnitude, width=width, allow_subnormal=False)
    if special:
        values = st.one_of(
            values, st.sampled_from([0.0, -0.0, float("nan"), float("inf"), float("-inf")])
        )
    return values


@st.composite
def arrays(draw, dtype, shape=shapes, **kw):
    """A NumPy array of `dtype` (bfloat16 included) and a drawn (or given) shape."""
    dtype = np_dtype(dtype) if isinstance(dtype, str) else dtype
    shape = draw(shape) if isinstance(shape, st.SearchStrategy) else shape
    if dtype == gk.bfloat16:  # hypothesis has no bfloat16: float32 values rounded to it
        return draw(hnp.arrays(np.float32, shape, elements=elements(dtype, **kw))).astype(dtype)
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype, **kw)))


@st.composite
def slices(draw, n: int):
    """A slice of an axis of length n: any start/stop (in range or not, negative or None) and a
    nonzero step of either sign."""
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return slice(draw(bound), draw(bound), draw(step))


@st.composite
def basic_keys(draw, shape):
    """A basic-indexing key for `shape`: per axis an integer in range or a slice, with None and
    at most one Ellipsis mixed in."""
    key = []
    for n in shape:
        if n and draw(st.booleans()) and draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(draw(slices(n)))
    if key and draw(st.booleans()):  # an Ellipsis in place of a run of full slices
        at = draw(st.integers(0, len(key) - 1))
        length = draw(st.integers(0, len(key) - at))
        key[at : at + length] = [Ellipsis]
    for _ in range(draw(st.integers(0, 2))):
        key.insert(draw(st.integers(0, len(key))), None)
    return tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0]
