"""pad against NumPy for every mode gpukit has, random widths, every dtype, strided input."""

import numpy as np
import pytest
from array_cases import ALL_DTYPES, assert_same, layouts

import gpukit as gk

MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pad_modes(backend, rng, dtype):
    for _, a, x in layouts(rng, (4, 3), dtype):
        widths = [1, (2, 0), ((1, 3), (0, 2)), ((9, 2), (3, 7)), rng.integers(0, 6, size=(2, 2))]
        for mode in MODES:
            for w in widths:
                assert_same(gk.pad(a, w, mode), np.pad(x, w, mode))
        assert gk.pad(a, 2, "empty").shape == (8, 7)
        assert_same(gk.pad(a, 2, "empty")[2:6, 2:5], x)
    value = True if dtype == "bool" else 7
    assert_same(gk.pad(a, 1, constant_values=value), np.pad(x, 1, constant_values=value))
    per_axis = ((1, 2), (3, 4)) if dtype != "bool" else ((True, False), (False, True))
    assert_same(
        gk.pad(a, (1, 2), constant_values=per_axis), np.pad(x, (1, 2), constant_values=per_axis)
    )


def test_pad_3d_and_errors(backend, rng):
    for _, a, x in layouts(rng, (2, 3, 4), "float32"):
        assert_same(
            gk.pad(a, ((0, 1), (2, 2), (1, 0)), "reflect"),
            np.pad(x, ((0, 1), (2, 2), (1, 0)), "reflect"),
        )
        assert_same(gk.pad(a, 1, "wrap"), np.pad(x, 1, "wrap"))
    with pytest.raises(ValueError, match="negative values"):
        gk.pad(a, -1)
    with pytest.raises(ValueError, match="mode 'median' is not supported"):
        gk.pad(a, 1, "median")
    with pytest.raises(ValueError, match="reflect_type='even' only"):
        gk.pad(a, 1, "reflect", reflect_type="odd")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        gk.pad(a, 1, "edge", constant_values=3)
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        gk.pad(gk.ones((0, 3)), 1, "edge")
    with pytest.raises(ValueError, match="does not broadcast"):
        gk.pad(a, ((1, 2, 3),))
