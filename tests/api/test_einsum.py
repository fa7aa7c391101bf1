"""einsum against NumPy's: matrix products, batches, diagonals, traces, sums, outer products,
ellipses with broadcasting, three and four operands, the interleaved form, dtypes and errors."""

import numpy as np
import pytest
from array_cases import as_float64, layouts
from conftest import assert_matches, random_array

import gpukit as gk

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->bki", [(2, 3, 4), (1, 4, 5)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->ji", [(3, 5)]),
    ("ij->", [(3, 5)]),
    ("ij->j", [(3, 5)]),
    ("i,i", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (1, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("i...->...", [(3, 2, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]),
    ("ab,bc,cd,de->ae", [(2, 6), (6, 1), (1, 5), (5, 3)]),
    ("i,i,i->", [(4,), (4,), (4,)]),
    ("Ab,bA->", [(3, 4), (4, 3)]),
]


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "int64", "uint16", "float16", "bfloat16", "float32", "float64"]
)
def test_einsum_matches_numpy(backend, rng, dtype):
    scale = 4 if dtype in ("float16", "bfloat16") else 1
    for spec, shapes in CASES:
        xs = [random_array(rng, s, dtype) for s in shapes]
        got = gk.einsum(spec, *[gk.asarray(x) for x in xs])
        if dtype in ("float16", "bfloat16", "float32", "float64"):
            want = np.einsum(spec, *[as_float64(x) for x in xs])
        elif dtype == "bool":
            want = np.einsum(spec, *xs)
        else:  # NumPy wraps integer sums in the operands' dtype; so does gpukit
            want = np.einsum(spec, *[x.astype(np.int64) for x in xs]).astype(dtype)
        expected = gk.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
        assert_matches(got, want, expected, scale=scale), spec


def test_einsum_strided_operands(backend, rng):
    for (_, a, x), (_, b, y) in zip(
        layouts(rng, (4, 6), "float32"), layouts(rng, (6, 4), "float32"), strict=True
    ):
        for spec in ("ij,jk->ik", "ij,ji->", "ij,ji->ij", "ij,kj->ki"):
            if spec == "ij,kj->ki":
                got, want = gk.einsum(spec, a, b.T), np.einsum(spec, as_float64(x), as_float64(y).T)
            else:
                got, want = gk.einsum(spec, a, b), np.einsum(spec, as_float64(x), as_float64(y))
            assert_matches(got, want, "float32", scale=4)
        got = gk.einsum("ii", a[:, :4])
        assert_matches(got, np.einsum("ii", as_float64(x)[:, :4]), "float32")
        got = gk.einsum("ii->i", b[1:5])
        assert_matches(got, np.einsum("ii->i", as_float64(y)[1:5]), "float32")


def test_einsum_forms_and_keywords(backend, rng):
    x, y = random_array(rng, (3, 4), "float64"), random_array(rng, (4,), "float64")
    a, b = gk.asarray(x), gk.asarray(y)
    assert_matches(gk.einsum(a, [0, 1], b, [1], [0]), np.einsum(x, [0, 1], y, [1], [0]))
    assert_matches(gk.einsum(a, [Ellipsis, 1], b, [1]), np.einsum(x, [Ellipsis, 1], y, [1]))
    assert_matches(gk.einsum(" ij , j -> i ", a, b), x @ y)
    ints = random_array(rng, (3, 4), "int16")
    got = gk.einsum("ij,j->i", gk.asarray(ints), b, dtype="float64")
    assert_matches(got, np.einsum("ij,j->i", ints, y, dtype="float64"))
    out = gk.full((3,), np.nan)
    assert gk.einsum("ij,j->i", a, b, out=out) is out
    assert_matches(out, x @ y)
    assert_matches(gk.einsum("ij,jk", a, a.T, optimize=True), x @ x.T)


@pytest.mark.parametrize(
    ("spec", "shapes", "message"),
    [
        ("ij,jk->ik", [(2, 3), (4, 5)], "subscript 'j' has sizes 3 and 4"),
        ("ij", [(2, 3, 4)], "no '...' ellipsis"),
        ("i->ii", [(3,)], "output subscript 'i' multiple times"),
        ("ij->k", [(2, 3)], "output subscript 'k' which never appeared"),
        ("i$", [(3,)], r"invalid subscript '\$'"),
        ("ij,jk", [(2, 3)], "2 subscript terms for 1 operands"),
        ("...i->i", [(2, 3)], "no '...' ellipsis provided"),
        ("i->i->i", [(3,)], "'->' only once"),
    ],
)
def test_einsum_errors(backend, spec, shapes, message):
    with pytest.raises(ValueError, match=message):
        gk.einsum(spec, *[gk.ones(s) for s in shapes])
    with pytest.raises(TypeError, match="cannot cast float64 to int32 safely"):
        gk.einsum("i->", gk.ones(3), dtype="int32")
