"""gpukit.fft against numpy.fft in float64: every length from 1 to 64 and long ones (powers of
two, 3^a 5^b 7^c, primes that need Bluestein, lengths past one block), every function and norm
mode, axes in any order, strided and batched inputs, dtypes as NumPy 2 gives them, outputs
written in full (pool memory poisoned first, out= poisoned), and bad arguments. Errors are
bounded norm-wise per transformed row by C * eps * log2(n) * ||reference||."""

import math

import numpy as np
import pytest
from array_cases import poisoned

import gpukit as gk

EPS = {
    np.dtype(np.complex64): 2.0**-23,
    np.dtype(np.float32): 2.0**-23,
    np.dtype(np.complex128): 2.0**-52,
    np.dtype(np.float64): 2.0**-52,
    np.dtype(np.float16): 2.0**-10,
}
C = 8  # a few units of the bound: rounding of the input, twiddles and butterflies
LONG = [1009, 2 * 1031, 4096, 3**4 * 5**2 * 7, 2**14, 6561, 8192 * 3, 17 * 19 * 4]


def _signal(rng, shape, dtype):
    dtype = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _poison_pool(shape, dtype):
    """Pool blocks of the result's size start out as NaN: a result element nothing wrote shows."""
    held = [gk.full(shape, np.nan, dtype) for _ in range(3)]
    del held


def _check(got, want, axes, dtype):
    """got (GPUArray) against want (float64/complex128 NumPy) norm-wise along `axes`."""
    assert isinstance(got, gk.GPUArray)
    g = got.to_numpy()
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == np.dtype(dtype), (g.dtype, dtype)
    assert not np.isnan(g).any()
    if want.size == 0:
        return
    axes = tuple(a % want.ndim for a in axes)
    n = max(math.prod(want.shape[a] for a in axes), 2)
    diff = np.sqrt(np.sum(np.abs(g.astype(want.dtype) - want) ** 2, axis=axes))
    ref = np.sqrt(np.sum(np.abs(want) ** 2, axis=axes))
    bound = C * EPS[np.dtype(dtype)] * math.log2(n) * np.maximum(ref, ref.max() * 1e-3)
    assert (diff <= bound).all(), (diff.max(), bound.min())


def _wide(x):
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


@pytest.mark.parametrize("n", range(1, 65))
def test_every_short_length(backend, rng, n):
    x = _signal(rng, (3, n), np.complex128)
    _poison_pool((3, n), np.complex128)
    _check(gk.fft.fft(x), np.fft.fft(x), (-1,), np.complex128)
    y = _signal(rng, (2, n), np.complex64)
    _check(gk.fft.ifft(y, norm="ortho"), np.fft.ifft(_wide(y), norm="ortho"), (-1,), np.complex64)
    r = _signal(rng, (2, n), np.float64)
    _check(gk.fft.rfft(r), np.fft.rfft(r), (-1,), np.complex128)
    h = np.fft.rfft(_signal(rng, (2, n), np.float64))
    _check(gk.fft.irfft(h, n), np.fft.irfft(h, n), (-1,), np.float64)


@pytest.mark.parametrize("n", LONG)
def test_long_lengths(backend, rng, n):
    x = _signal(rng, (2, n), np.complex128)
    _check(gk.fft.fft(x), np.fft.fft(x), (-1,), np.complex128)
    y = _signal(rng, (n,), np.complex64)
    _check(gk.fft.ifft(y), np.fft.ifft(_wide(y)), (-1,), np.complex64)
    r = _signal(rng, (n,), np.float32)
    _check(gk.fft.rfft(r), np.fft.rfft(_wide(r)), (-1,), np.complex64)
    h = np.fft.rfft(_signal(rng, (2, n), np.float64))
    _check(gk.fft.irfft(h, n, norm="forward"), np.fft.irfft(h, n, norm="forward"), (-1,),
           np.float64)  # fmt: skip


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_dimensional_functions(backend, rng, name, norm):
    real_in = name in ("rfft", "ihfft")
    x = _signal(rng, (4, 6, 5), np.float64 if real_in else np.complex128)
    for axis, n in ((-1, None), (0, 7), (1, 3), (-2, 10)):
        got = getattr(gk.fft, name)(x, n=n, axis=axis, norm=norm)
        want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
        _check(got, want, (axis,), want.dtype)


N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_n_dimensional_functions(backend, rng, name, norm):
    real_in = name.startswith("rfft")
    x = _signal(rng, (3, 4, 6), np.float64 if real_in else np.complex128)
    f, ref = getattr(gk.fft, name), getattr(np.fft, name)
    two = name.endswith("2")
    cases = [dict(), dict(axes=(0, 2)), dict(axes=(2, 0)), dict(s=(5, 4), axes=(-1, 0))]
    if not two:
        cases += [dict(axes=(1, 2, 0)), dict(s=(2, 7, 3), axes=(0, 1, 2))]
    for kw in cases:
        got, want = f(x, norm=norm, **kw), ref(x, norm=norm, **kw)
        axes = kw.get("axes", (-2, -1) if two else tuple(range(x.ndim)))
        _check(got, want, axes, want.dtype)


def test_strided_inputs(backend, rng):
    """Slices with steps, transposes and negative strides, along every axis."""
    big = _signal(rng, (9, 13, 11), np.complex128)
    cuts = [lambda a: a[1::2, ::3, 2:9], lambda a: a.transpose(2, 0, 1), lambda a: a[::-1, 3, ::-2]]
    for cut in cuts:
        v, gv = cut(big), cut(gk.asarray(big))
        for axis in range(v.ndim):
            _check(gk.fft.fft(gv, axis=axis), np.fft.fft(v, axis=axis), (axis,), np.complex128)
            _check(gk.fft.rfft(gk.real(gv), axis=axis), np.fft.rfft(v.real, axis=axis), (axis,),
                   np.complex128)  # fmt: skip
            _check(gk.fft.irfft(gv, axis=axis), np.fft.irfft(v, axis=axis), (axis,), np.float64)
    real = _signal(rng, (7, 40), np.float32)
    odd_offset = gk.asarray(real)[:, 1:]  # 4-byte aligned rows: no half-length pairs
    _check(gk.fft.rfft(odd_offset), np.fft.rfft(_wide(real[:, 1:])), (-1,), np.complex64)


def test_batched_along_any_axis(backend, rng):
    x = _signal(rng, (5, 64, 3, 2), np.complex64)
    for axis in range(4):
        _check(gk.fft.fft(x, axis=axis), np.fft.fft(_wide(x), axis=axis), (axis,), np.complex64)
    # More batch dimensions than the kernels index: copied to a contiguous array first.
    y = _signal(rng, (2, 3, 2, 3, 2, 16), np.complex128)[..., ::2]
    _check(gk.fft.fft(y, axis=2), np.fft.fft(y, axis=2), (2,), np.complex128)


def test_out_argument_is_written_in_full(backend, rng):
    x = _signal(rng, (6, 30), np.complex128)
    out = poisoned((6, 30), np.complex128)
    assert gk.fft.fft(x, out=out) is out
    _check(out, np.fft.fft(x), (-1,), np.complex128)
    r = _signal(rng, (6, 30), np.float64)
    out = poisoned((6, 16), np.complex128)
    gk.fft.rfftn(r, out=out)
    _check(out, np.fft.rfftn(r), (0, 1), np.complex128)
    with pytest.raises(ValueError, match="shape"):
        gk.fft.fft(x, out=poisoned((6, 29), np.complex128))
    with pytest.raises(TypeError, match="cast"):
        gk.fft.fft(x, out=poisoned((6, 30), np.float64))


def test_dtypes_follow_numpy(backend, rng):
    for dtype in ("float32", "float16", "int32", "bool", "int64", "float64"):
        x = (rng.standard_normal(12) * 4).astype(dtype)
        for name in ONE_D:
            got = getattr(gk.fft, name)(x)
            want = getattr(np.fft, name)(x)
            assert got.dtype == want.dtype, (name, dtype, got.dtype, want.dtype)
            wide = getattr(np.fft, name)(x.astype(np.float64))
            _check(got, wide, (-1,), want.dtype)
    b = gk.asarray(rng.standard_normal(8).astype(np.float32)).astype(gk.bfloat16)
    assert gk.fft.fft(b).dtype == np.complex64


def test_helpers(backend, rng):
    for n in (1, 2, 7, 10):
        for d in (1.0, 0.25):
            _check(gk.fft.fftfreq(n, d), np.fft.fftfreq(n, d), (0,), np.float64)
            _check(gk.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), (0,), np.float64)
    assert gk.fft.fftfreq(4, dtype=np.float32).dtype == np.float32
    assert gk.fft.fftfreq(4, device=gk.device()).device == gk.asarray([1]).device
    x = rng.standard_normal((4, 5, 3))
    for axes in (None, 0, (1, 2), (-1,)):
        np.testing.assert_array_equal(gk.fft.fftshift(x, axes).to_numpy(), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(
            gk.fft.ifftshift(x, axes).to_numpy(), np.fft.ifftshift(x, axes)
        )


def test_round_trips_and_determinism(backend, rng):
    x = _signal(rng, (3, 100), np.complex64)
    a, b = gk.fft.fft(x), gk.fft.fft(x)
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    _check(gk.fft.ifft(gk.fft.fft(x)), _wide(x), (-1,), np.complex64)
    r = _signal(rng, (2, 33), np.float64)
    _check(gk.fft.irfft(gk.fft.rfft(r), 33), r, (-1,), np.float64)


def test_namespace(backend, rng):
    x = gk.asarray(_signal(rng, (8,), np.complex128))
    xp = x.__array_namespace__()
    assert xp.fft is gk.fft
    _check(xp.fft.fft(x), np.fft.fft(x.to_numpy()), (-1,), np.complex128)


def test_empty_batches(backend):
    for shape in ((0, 8), (3, 0, 8)):
        got = gk.fft.fft(np.zeros(shape, np.complex64))
        assert got.shape == shape and got.dtype == np.complex64
        assert gk.fft.rfft(np.zeros(shape)).shape == (*shape[:-1], 5)


def test_bad_arguments(backend):
    x = gk.asarray(np.ones((4, 4), np.complex128))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        gk.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        gk.fft.irfft(np.ones(1, np.complex128))  # n defaults to 2 * (1 - 1)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        gk.fft.fft(np.ones((4, 0)))
    with pytest.raises(TypeError, match="n must be an integer"):
        gk.fft.fft(x, n=2.5)
    with pytest.raises(np.exceptions.AxisError):
        gk.fft.fft(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        gk.fft.fftn(x, axes=(0, -3))
    with pytest.raises(ValueError, match="norm"):
        gk.fft.fft(x, norm="sideways")
    with pytest.raises(TypeError, match="real input"):
        gk.fft.rfft(x)
    with pytest.raises(ValueError, match="0-d"):
        gk.fft.fft(gk.asarray(3.0))
    with pytest.raises(ValueError, match="same length"):
        gk.fft.fftn(x, s=(4,), axes=(0, 1))
    with pytest.raises(TypeError):
        gk.fft.fft(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        gk.fft.fftfreq(0)
    with pytest.raises(TypeError, match="real floating-point"):
        gk.fft.fftfreq(4, dtype=np.int32)
