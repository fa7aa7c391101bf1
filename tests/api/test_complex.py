"""complex64 and complex128 through gpukit, against NumPy on every backend: promotion (Python
complex scalars weak; bfloat16 with complex as PyTorch), creation, casts (NumPy's ComplexWarning
for complex -> real), assignment and indexing, arithmetic with scalars and out=, the parts (real
and imag as views), rounding, reductions, matrix products, DLPack, SafeTensors, and the errors
NumPy and the Array API give. The elementwise functions themselves are checked op by op, special
values included, by test_elementwise_table.py."""

import json
import struct
import warnings

import numpy as np
import pytest
from conftest import random_array

import gpukit as gk

COMPLEX = ["complex64", "complex128"]
_TOL = {np.dtype("complex64"): 2e-5, np.dtype("complex128"): 1e-12}


def crandom(rng, shape, dtype):
    """Random complex values of `dtype` (both parts normal, never all zero)."""
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def assert_close(got, want, dtype=None, scale=1.0):
    """`got` (GPUArray) against `want`: dtype, shape, and each part within the complex dtype's
    tolerance relative to the magnitude of the finite parts (NaNs and infinities of each part in
    the same places)."""
    assert isinstance(got, gk.GPUArray), type(got)
    host = got.to_numpy()
    want = np.asarray(want)
    dtype = np.dtype(dtype if dtype is not None else want.dtype)
    assert host.dtype == dtype and host.shape == want.shape, (host.dtype, host.shape, want.shape)
    if dtype.kind in "biu":
        np.testing.assert_array_equal(host, want)
        return
    tol = scale * _TOL.get(dtype, {"float32": 2e-5, "float64": 1e-12}.get(dtype.name, 2e-3))
    w = want.astype(np.complex128)
    h = host.astype(np.complex128)
    limit = tol * (1 + np.abs(np.nan_to_num(w, nan=0.0, posinf=0.0, neginf=0.0)))
    for part in (np.real, np.imag):
        hp, wp = part(h), part(w)
        np.testing.assert_array_equal(np.isnan(hp), np.isnan(wp))
        infinite = np.isinf(wp)
        np.testing.assert_array_equal(hp[infinite], wp[infinite])
        finite = np.isfinite(wp)
        assert (np.abs(hp[finite] - wp[finite]) <= limit[finite]).all(), (hp[finite], wp[finite])


# --- dtypes and promotion -------------------------------------------------------------------------


def test_dtypes_are_numpy_complex_dtypes():
    assert gk.complex64 == np.dtype("complex64") and gk.complex128 == np.dtype("complex128")
    assert gk.isdtype(gk.complex64, "complex floating") and gk.isdtype(gk.complex128, "numeric")
    assert not gk.isdtype(gk.complex64, "real floating")
    info = gk.finfo(gk.complex64)
    assert info.dtype == np.float32 and info.eps == float(np.finfo(np.float32).eps)
    assert gk.finfo(gk.complex128).bits == 64


@pytest.mark.parametrize(
    "left", ["bool", "int8", "int64", "uint32", "float16", "float32", "float64", *COMPLEX]
)
@pytest.mark.parametrize("right", [*COMPLEX, 1j, 2.5, 3])
def test_promotion_matches_numpy(backend, left, right):
    a = gk.ones(3, left)
    x = np.ones(3, left)
    if isinstance(right, str):
        got, want = a + gk.ones(3, right), x + np.ones(3, right)
    else:
        got, want = a + right, x + right
    assert got.dtype == want.dtype, (left, right, got.dtype, want.dtype)
    assert gk.result_type(a, right if not isinstance(right, str) else gk.ones(1, right)) == (
        want.dtype
    )


def test_bfloat16_with_complex_promotes_as_pytorch(backend):
    b = gk.ones(3, gk.bfloat16)
    assert (b + 1j).dtype == np.complex64
    assert (b + gk.ones(3, "complex64")).dtype == np.complex64
    assert (b + gk.ones(3, "complex128")).dtype == np.complex128
    assert (gk.ones(3, "float64") + b + 1j).dtype == np.complex128
    assert gk.result_type(gk.bfloat16, 1j) == np.complex64
    assert gk.can_cast(gk.bfloat16, gk.complex64) and not gk.can_cast(gk.complex64, gk.float32)
    np.testing.assert_array_equal((b * (0.5 - 2j)).to_numpy(), np.full(3, 0.5 - 2j, np.complex64))


# --- creation, casts and assignment ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_creation(backend, rng, dtype):
    x = crandom(rng, (5, 3), dtype)
    assert_close(gk.asarray(x), x)
    assert_close(gk.asarray(x.tolist(), dtype=dtype), x)
    assert_close(gk.zeros((2, 3), dtype), np.zeros((2, 3), dtype))
    assert_close(gk.ones(4, dtype), np.ones(4, dtype))
    assert_close(gk.full((2, 2), 1.5 - 2j, dtype), np.full((2, 2), 1.5 - 2j, dtype))
    assert_close(gk.full(3, 2 + 1j), np.full(3, 2 + 1j))  # a Python complex: complex128
    assert_close(gk.asarray([1, 2j]), np.asarray([1, 2j]))
    assert_close(gk.full_like(gk.asarray(x), -1j), np.full_like(x, -1j))
    assert gk.asarray(x[0, 0]).item() == complex(x[0, 0])
    assert "j" in repr(gk.asarray(x)) and "complex" in repr(gk.asarray(x))


def test_full_of_a_complex_into_a_real_dtype_warns_and_keeps_the_real_part(backend):
    with pytest.warns(np.exceptions.ComplexWarning):
        a = gk.full(3, 2 - 5j, "float32")
    np.testing.assert_array_equal(a.to_numpy(), np.full(3, 2, np.float32))
    np.testing.assert_array_equal(gk.full(2, 1j, "bool").to_numpy(), [True, True])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_casts_follow_numpy(backend, rng, dtype):
    x = crandom(rng, (4, 7), dtype)
    a = gk.asarray(x)
    for target in ("float32", "float64", "int32", "float16"):
        with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
            got = a.T.astype(target)
        want = x.T.real.astype(target)
        np.testing.assert_array_equal(got.to_numpy(), want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for bool, nor for the complex dtypes
        np.testing.assert_array_equal(a.astype(bool).to_numpy(), x.astype(bool))
        np.testing.assert_array_equal(
            gk.asarray(np.array([0j, 1j, 2, 0])).astype(bool).to_numpy(), [False, True, True, False]
        )
        other = "complex128" if dtype == "complex64" else "complex64"
        np.testing.assert_array_equal(a.astype(other).to_numpy(), x.astype(other))
        real = random_array(rng, (3, 4), "float32")
        np.testing.assert_array_equal(gk.asarray(real).astype(dtype).to_numpy(), real.astype(dtype))
        ints = random_array(rng, (3, 4), "int16")
        np.testing.assert_array_equal(gk.asarray(ints).astype(dtype).to_numpy(), ints.astype(dtype))
        bf = random_array(rng, (5,), "bfloat16")
        np.testing.assert_array_equal(
            gk.asarray(bf).astype(dtype).to_numpy(), bf.astype(np.float32).astype(dtype)
        )


@pytest.mark.parametrize("dtype", COMPLEX)
def test_assignment_and_indexing(backend, rng, dtype):
    x = crandom(rng, (6, 5), dtype)
    a = gk.asarray(x)
    a[1, 2] = 3 - 4j
    x[1, 2] = 3 - 4j
    a[::2, 1] = 7.5
    x[::2, 1] = 7.5
    a[4] = gk.asarray(x[0] * 2j)
    x[4] = x[0] * 2j
    assert_close(a, x)
    idx = np.array([4, 0, 5, 5])
    assert_close(a[gk.asarray(idx)], x[idx])
    mask = x.real > 0
    assert_close(a[gk.asarray(mask)], x[mask])
    a[gk.asarray(idx[:2]), 1:3] = -1j
    x[idx[:2], 1:3] = -1j
    assert_close(a, x)
    assert_close(gk.take(a, gk.asarray([3, 1])), np.take(x, [3, 1]))

    f = gk.zeros(3, "float64")
    with pytest.raises(TypeError, match="not 'complex'"):
        f[0] = 1j
    with pytest.raises(TypeError, match="not 'complex'"):
        gk.zeros(2, "int32")[...] = 2 + 1j
    with pytest.warns(np.exceptions.ComplexWarning):
        f[...] = gk.asarray(np.array([1 + 5j, 2, 3j]))
    np.testing.assert_array_equal(f.to_numpy(), [1, 2, 0])
    flags = gk.zeros(2, "bool")
    flags[...] = 1j
    np.testing.assert_array_equal(flags.to_numpy(), [True, True])


# --- arithmetic ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**"])
def test_operators_with_arrays_and_scalars(backend, rng, dtype, op):
    x = crandom(rng, (4, 9), dtype)
    y = crandom(rng, (9,), dtype)
    a, b = gk.asarray(x), gk.asarray(y)
    scale = 50 if op == "**" else 4  # powers: exp(b log a) in the dtype
    for left, right, gl, gr in (
        (x, y, a, b),
        (x.T, 0.5 - 1.25j, a.T, 0.5 - 1.25j),
        (2.5, x, 2.5, a),
        (x, 3, a, 3),
        (-1j, x[::2], -1j, a[::2]),
    ):
        env = {"l": left, "r": right, "gl": gl, "gr": gr}
        want = eval(f"l {op} r", env)
        got = eval(f"gl {op} gr", env)
        assert_close(got, want, scale=scale)


def test_real_arrays_with_complex_scalars(backend, rng):
    x = random_array(rng, (3, 5), "float32")
    a = gk.asarray(x)
    assert_close(a * (1 + 2j), x * (1 + 2j))
    assert_close((1 - 1j) - a, (1 - 1j) - x)
    ints = random_array(rng, (7,), "int8")
    assert_close(gk.asarray(ints) + 0.5j, ints + 0.5j)  # complex128, as NumPy
    out = gk.full((3, 5), np.nan + 0j, "complex64")
    assert gk.multiply(a, 2j, out=out) is out
    assert_close(out, x * np.complex64(2j))
    with pytest.raises(TypeError, match="cannot cast the complex64 result to out's float32"):
        gk.add(a, 1j, out=a)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_comparisons(backend, rng, dtype):
    x = crandom(rng, (5, 4), dtype)
    y = x.copy()
    y[::2] = crandom(rng, (3, 4), dtype)
    a, b = gk.asarray(x), gk.asarray(y)
    np.testing.assert_array_equal((a == b).to_numpy(), x == y)
    np.testing.assert_array_equal((a != b).to_numpy(), x != y)
    np.testing.assert_array_equal((a == x[0, 0].item()).to_numpy(), x == x[0, 0])
    for name in ("less", "less_equal", "greater", "greater_equal"):
        with pytest.raises(TypeError, match=f"{name} is not defined for complex numbers"):
            getattr(gk, name)(a, b)
    with pytest.raises(TypeError):
        a < 1j  # noqa: B015
    with pytest.raises(TypeError):
        a >= b  # noqa: B015


def test_maximum_and_minimum_order_complex_numbers_as_numpy(backend):
    nan = np.nan
    x = np.array([1 + 2j, 1 + 3j, 2 - 5j, complex(nan, 0), 3j, complex(1, nan), -1, 4 + 4j])
    y = np.array([1 + 1j, 1 + 3j, 2 - 4j, 5 + 0j, complex(0, nan), 2j, -1 - 1j, 4 + 4j])
    for dtype in COMPLEX:
        a, b = gk.asarray(x.astype(dtype)), gk.asarray(y.astype(dtype))
        for name in ("maximum", "minimum", "fmax", "fmin"):
            want = getattr(np, name)(x.astype(dtype), y.astype(dtype))
            np.testing.assert_array_equal(getattr(gk, name)(a, b).to_numpy(), want, err_msg=name)


# --- the parts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_real_and_imag_are_views(backend, rng, dtype):
    x = crandom(rng, (4, 6), dtype)
    a = gk.asarray(x)
    part = np.dtype("float32" if dtype == "complex64" else "float64")
    for got, want in ((a.real, x.real), (a.imag, x.imag), (gk.real(a.T), x.T.real)):
        assert got.dtype == part
        np.testing.assert_array_equal(got.to_numpy(), want)
    a.real[1] = 10.0
    x.real[1] = 10.0
    a.imag[:, ::3] = -2.0
    x.imag[:, ::3] = -2.0
    gk.imag(a)[0, 0] = 0.25
    x.imag[0, 0] = 0.25
    np.testing.assert_array_equal(a.to_numpy(), x)
    a.imag = 0
    x.imag = 0
    np.testing.assert_array_equal(a.to_numpy(), x)
    np.testing.assert_array_equal(gk.conj(a[1:]).to_numpy(), np.conj(x[1:]))
    np.testing.assert_array_equal(a.conjugate().to_numpy(), x.conjugate())
    r = random_array(rng, (3,), "float32")
    g = gk.asarray(r)
    assert gk.real(g) is g
    np.testing.assert_array_equal(gk.imag(g).to_numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(g.conj().to_numpy(), r)
    with pytest.raises(TypeError, match="does not have imaginary part"):
        g.imag = 1.0


def test_angle_abs_and_sign(backend, rng):
    x = crandom(rng, (50,), "complex128")
    x[:3] = [0, -2, 3j]
    a = gk.asarray(x)
    assert_close(gk.angle(a), np.angle(x), "float64")
    assert_close(gk.angle(a, deg=True), np.angle(x, deg=True), "float64")
    assert_close(abs(a), np.abs(x), "float64")
    assert_close(gk.sign(a), np.sign(x))
    ints = np.array([-3, 0, 4], np.int8)
    assert_close(gk.angle(gk.asarray(ints)), np.angle(ints), "float16")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_round_part_by_part(backend, rng, dtype):
    x = (crandom(rng, (40,), dtype) * 100).astype(dtype)
    x[:4] = [2.5 + 0.5j, -1.5 - 2.5j, 0.125 + 3.5j, 12345.678 - 0.005j]
    a = gk.asarray(x)
    for decimals in (0, 1, 2, -1):
        np.testing.assert_array_equal(gk.round(a, decimals).to_numpy(), np.round(x, decimals))
    np.testing.assert_array_equal(a[::3].round(1).to_numpy(), x[::3].round(1))


# --- reductions and products ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions(backend, rng, dtype):
    x = crandom(rng, (6, 37, 5), dtype)
    a = gk.asarray(x)
    for axis in (None, 0, 1, (0, 2)):
        scale = 20
        assert_close(a.sum(axis), x.sum(axis), scale=scale)
        assert_close(gk.mean(a, axis), np.mean(x, axis), scale=scale)
        assert_close(a.var(axis), np.var(x, axis), x.real.dtype, scale=scale)
        assert_close(a.std(axis), np.std(x, axis), x.real.dtype, scale=scale)
    small = (x[:2, :7, :3] / 2).astype(dtype)
    assert_close(gk.prod(gk.asarray(small), 1), np.prod(small, 1), scale=20)
    assert_close(a[:, ::4].sum(1), x[:, ::4].sum(1), scale=20)
    assert_close(gk.cumsum(a[0], 0), np.cumsum(x[0], 0), scale=20)
    assert gk.any(a).item() and gk.all(a).item()
    np.testing.assert_array_equal(gk.any(a * 0, 1).to_numpy(), np.any(x * 0, 1))


def test_extrema_order_complex_numbers_as_numpy(backend, rng):
    x = (rng.integers(-2, 3, (7, 9)) + 1j * rng.integers(-2, 3, (7, 9))).astype("complex64")
    a = gk.asarray(x)
    for axis in (None, 0, 1):
        for name in ("max", "min", "argmax", "argmin"):
            want = getattr(np, name)(x, axis=axis)
            got = getattr(gk, name)(a, axis=axis)
            np.testing.assert_array_equal(got.to_numpy(), want, err_msg=(name, axis))
    x[3, 4] = complex(np.nan, 1)
    a = gk.asarray(x)
    for name in ("max", "min", "argmax", "argmin"):
        want = getattr(np, name)(x, axis=1)
        np.testing.assert_array_equal(getattr(gk, name)(a, axis=1).to_numpy(), want)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matrix_products(backend, rng, dtype):
    x = crandom(rng, (37, 19), dtype)
    y = crandom(rng, (19, 45), dtype)
    a, b = gk.asarray(x), gk.asarray(y)
    scale = 200  # sums of 19 complex products
    assert_close(a @ b, x @ y, scale=scale)
    assert_close(gk.matmul(b.T, a.T), y.T @ x.T, scale=scale)
    assert_close(gk.dot(a[::2], y[:, 1]), x[::2] @ y[:, 1], scale=scale)
    batch = crandom(rng, (3, 5, 19), dtype)
    assert_close(gk.asarray(batch) @ b, batch @ y, scale=scale)
    real = random_array(rng, (19, 4), "float32")
    assert_close(a @ gk.asarray(real), x @ real, scale=scale)
    v, w = crandom(rng, (3, 7), dtype), crandom(rng, (21,), dtype)
    assert_close(gk.vdot(gk.asarray(v), gk.asarray(w)), np.vdot(v, w), scale=scale)
    assert gk.vdot(gk.asarray(v), gk.asarray(w)).shape == ()
    with pytest.raises(ValueError, match="different lengths"):
        gk.vdot(gk.asarray(v), gk.asarray(w[:5]))
    bias = crandom(rng, (37,), dtype)
    assert_close(gk.linear(b.T, a, gk.asarray(bias)), y.T @ x.T + bias, scale=scale)


# --- exchange -------------------------------------------------------------------------------------


class _Producer:
    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


@pytest.mark.parametrize("dtype", COMPLEX)
def test_dlpack(backend, rng, dtype):
    x = crandom(rng, (4, 6), dtype)
    a = gk.asarray(x)
    back = gk.from_dlpack(_Producer(a.T))
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.to_numpy(), x.T)
    a[0, 1] = 5 - 7j  # the same memory: seen through the import
    assert back[1, 0].item() == 5 - 7j
    if backend == "cpu":
        np.testing.assert_array_equal(np.from_dlpack(a[1:, ::2]), x[1:, ::2])
        np.testing.assert_array_equal(gk.from_dlpack(x).to_numpy(), x)


def test_safetensors_complex64_and_no_complex128(backend, rng, tmp_path):
    x = crandom(rng, (3, 5), "complex64")
    path = tmp_path / "c.safetensors"
    gk.save_safetensors({"z": gk.asarray(x), "r": gk.ones(2)}, path)
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    assert json.loads(raw[8 : 8 + size])["z"]["dtype"] == "C64"
    loaded = gk.load_safetensors(path)
    assert loaded["z"].dtype == np.complex64
    np.testing.assert_array_equal(loaded["z"].to_numpy(), x)
    st = pytest.importorskip("safetensors.numpy")
    assert (path.read_bytes()) == st.save({"z": x, "r": np.ones(2)})
    np.testing.assert_array_equal(st.load_file(str(path))["z"], x)
    with pytest.raises(TypeError, match="complex128 has no SafeTensors equivalent"):
        gk.save_safetensors({"z": gk.asarray(x.astype("complex128"))}, tmp_path / "d")
    as_f16 = gk.load_safetensors(path, dtype="float16")  # converts real floats only
    assert as_f16["z"].dtype == np.complex64 and as_f16["r"].dtype == np.float16


# --- what complex numbers are refused -------------------------------------------------------------


def test_refusals(backend):
    z = gk.asarray(np.array([1 + 1j, 2 - 1j], np.complex64))
    for name in ("floor", "ceil", "trunc", "signbit", "cbrt", "fmod", "copysign", "arctan2"):
        args = (z,) * (2 if name in ("fmod", "copysign", "arctan2") else 1)
        with pytest.raises(TypeError, match=f"{name} is not defined for"):
            getattr(gk, name)(*args)
    with pytest.raises(TypeError, match="clip is not defined for complex numbers"):
        gk.clip(z, 0, 1)
    with pytest.raises(TypeError, match="does not take complex arrays"):
        gk.sort(z)
    with pytest.raises(TypeError, match="does not take complex arrays"):
        gk.unique(z)
    with pytest.raises(TypeError):
        gk.nn.relu(z)
    with pytest.raises(TypeError):
        gk.random.rand(3, dtype="complex64")
    with pytest.raises(TypeError):
        z // z


def test_nan_to_num_and_isclose(backend):
    x = np.array([complex(np.nan, 1), complex(np.inf, -np.inf), 1 + 2j, complex(2, np.nan)])
    a = gk.asarray(x)
    np.testing.assert_array_equal(gk.nan_to_num(a).to_numpy(), np.nan_to_num(x))
    np.testing.assert_array_equal(
        gk.nan_to_num(a, nan=0.5, posinf=9.0, neginf=-9.0).to_numpy(),
        np.nan_to_num(x, nan=0.5, posinf=9.0, neginf=-9.0),
    )
    y = x + 1e-9
    np.testing.assert_array_equal(gk.isclose(a, gk.asarray(y)).to_numpy(), np.isclose(x, y))
    np.testing.assert_array_equal(gk.isnan(a).to_numpy(), np.isnan(x))
