"""Every elementwise op of the table, for every dtype its rule takes, generated from the table
(tests/elementwise_cases.py): parity with NumPy on fresh random data with special values (a
float64 reference for functions that round, NumPy's own answer bit for bit for the others), an
odd size, strided and transposed operands, Python scalars on either side, and out= into a
strided view of a poisoned array (two different poisons give the same answer, and what lies
outside the view stays). Every backend."""

import numpy as np
import pytest
from elementwise_cases import assert_elementwise, cases, expected, operand_dtypes, operands
from elementwise_cases import result_dtypes as _result_dtypes

import gpukit as gk

CASES = cases()


def _check(got, name, xs, types):
    loop, _ = _result_dtypes(name, types)
    assert isinstance(got, gk.GPUArray)
    assert_elementwise(got.to_numpy(), expected(name, xs, types), name, loop)


def _comparable(x: np.ndarray) -> np.ndarray:
    """bfloat16 as float32, which NumPy's comparisons understand (NaNs included)."""
    return x.astype(np.float32) if x.dtype == gk.bfloat16 else x


def _poisons(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return False, True
    if dtype.kind in "iu":
        return 7, 9
    if dtype.kind == "c":
        return complex(np.nan, np.nan), 1234.5 - 77j
    return np.nan, 1234.5


def _scalar(dtype):
    """A Python scalar of the array's kind, exactly representable in every dtype of that kind."""
    kind = np.dtype(dtype).kind
    return {"b": True, "i": 3, "u": 3, "c": 0.75 - 0.5j}.get(kind, 0.75)


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_op_matches_numpy(backend, rng, name, dtype):
    types = operand_dtypes(name, dtype)
    _, out_dtype = _result_dtypes(name, types)
    f = getattr(gk, name)

    xs = operands(rng, name, types, (1001,))  # contiguous, an odd size: vectors and a tail
    _check(f(*(gk.asarray(x) for x in xs)), name, xs, types)

    # Strided and transposed operands of an odd shape.
    bases = operands(rng, name, types, (7, 26))
    views = [gk.asarray(bases[0])[:, 1::2]]
    hosts = [bases[0][:, 1::2]]
    if len(types) == 2:
        t = np.ascontiguousarray(bases[1][:, :13].T)  # stored (13, 7), used as its .T
        views.append(gk.asarray(t).T)
        hosts.append(t.T)
    _check(f(*views), name, hosts, types)

    # out= into a strided view of poisoned memory: every element written, nothing outside.
    results = []
    for poison in _poisons(out_dtype):
        big = gk.full((7, 26), poison, out_dtype)
        out = big[:, ::2]
        assert gk.elementwise(name, *views, out=out) is out
        _check(out, name, hosts, types)
        rest = _comparable(big[:, 1::2].to_numpy())
        np.testing.assert_array_equal(rest, _comparable(np.full(rest.shape, poison, out_dtype)))
        results.append(_comparable(out.to_numpy()))
    np.testing.assert_array_equal(results[0], results[1])

    if len(types) == 2 and types[0] == types[1]:  # Python scalars on either side
        s = _scalar(dtype)
        x = hosts[0]
        filled = np.full(x.shape, s, types[1])
        _check(f(views[0], s), name, [x, filled], types)
        if not (name == "power" and np.dtype(dtype).kind == "i"):  # x holds negative exponents
            _check(f(s, views[0]), name, [filled, x], types)


def test_the_cases_cover_every_numpy_op_of_the_table():
    from elementwise_cases import NAMES

    assert {name for name, _ in CASES} == set(NAMES)
    assert {"complex64", "complex128", "bfloat16", "float16"} <= {d for _, d in CASES}
