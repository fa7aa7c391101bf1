"""meshgrid, indices, logspace, geomspace against NumPy."""

import numpy as np
import pytest
from array_cases import assert_same
from conftest import assert_matches, random_array

import gpukit as gk


@pytest.mark.parametrize("dtype", ["int16", "bfloat16", "float32"])
def test_meshgrid(backend, rng, dtype):
    xs = [random_array(rng, (n,), dtype) for n in (3, 4, 2)]
    strided = [gk.asarray(np.repeat(x, 2))[::2] for x in xs]
    for k in (1, 2, 3):
        for indexing in ("xy", "ij"):
            for sparse in (False, True):
                got = gk.meshgrid(*strided[:k], indexing=indexing, sparse=sparse)
                want = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
                assert isinstance(got, list) and len(got) == len(want)
                for g, w in zip(got, want, strict=True):
                    assert_same(g, w)
    views = gk.meshgrid(*strided[:2], copy=False)
    assert views[0]._buf is strided[0]._buf
    assert gk.meshgrid() == []
    with pytest.raises(ValueError, match="'xy' and 'ij'"):
        gk.meshgrid(strided[0], indexing="ji")


def test_indices(backend):
    for dims in ((2, 3), (4,), (2, 1, 3)):
        assert_same(gk.indices(dims), np.indices(dims))
        for g, w in zip(
            gk.indices(dims, dtype="int8", sparse=True),
            np.indices(dims, "int8", sparse=True),
            strict=True,
        ):
            assert_same(g, w)


def test_logspace_geomspace(backend):
    for args, kwargs in (
        ((0, 3), {}),
        ((1, -2, 7), {"endpoint": False}),
        ((0, 2, 5), {"base": 2.0}),
        ((2, 2, 1), {}),
    ):
        assert_matches(gk.logspace(*args, **kwargs), np.logspace(*args, **kwargs), scale=10)
    assert_matches(gk.logspace(0, 1, 4, dtype="float32"), np.logspace(0, 1, 4, dtype="float32"))
    for args, kwargs in (
        ((1, 1000, 4), {}),
        ((2, 3, 6), {"endpoint": False}),
        ((-1, -100, 5), {}),
        ((5, 0.5, 3), {}),
        ((3, 7, 1), {}),
    ):
        got, want = gk.geomspace(*args, **kwargs), np.geomspace(*args, **kwargs)
        assert_matches(got, want, scale=10)
        if args[2] > 0:
            assert got[0].item() == want[0]
    assert gk.geomspace(2, 8, 3)[-1].item() == 8
    with pytest.raises(ValueError, match="cannot include zero"):
        gk.geomspace(0, 4)
    with pytest.raises(TypeError, match="scalar start and stop"):
        gk.logspace(gk.ones(2), 3)
