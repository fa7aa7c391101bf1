"""gpukit.random: Philox4x32-10 known answers, distribution moments, bounds, determinism by seed,
and the same numbers, bit for bit, from the same seed on every backend."""

import math

import numpy as np
import pytest

import gpukit as gk
from gpukit.runtime import philox as _philox

N = 200_000
FLOATS = ["float16", "float32", "float64"]


def within(value, expected, stderr, k=6.0):
    assert abs(value - expected) <= k * stderr, (value, expected, stderr)


def test_philox_known_answers():
    # Random123's kat_vectors for philox4x32_10: (counter, key) -> words.
    for ctr, key, want in (
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ):
        groups = np.array([ctr[0] | ctr[1] << 32], np.uint64)
        words = _philox.philox4x32(groups, ctr[2] | ctr[3] << 32, key[0] | key[1] << 32)
        assert tuple(int(w[0]) for w in words) == want


def test_box_muller_math_is_accurate():
    # The log and sine/cosine built from correctly rounded operations (shared by both backends).
    rng = np.random.default_rng(0)
    u1 = np.concatenate([[1.0, 2.0**-53, 2.0**-24, 0.5], 1.0 - rng.random(100_000)])
    u2 = np.concatenate([[0.0, 0.25, 0.125, 1 - 2.0**-53], rng.random(100_000)])
    z0, z1 = _philox._box_muller(u1, u2)
    radius = np.sqrt(-2.0 * np.log(u1))
    np.testing.assert_allclose(z0, radius * np.cos(2 * np.pi * u2), rtol=0, atol=1e-14)
    np.testing.assert_allclose(z1, radius * np.sin(2 * np.pi * u2), rtol=0, atol=1e-14)
    np.testing.assert_allclose(_philox._log_unit(u1), np.log(u1), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_moments_range_and_resolution(backend, dtype):
    gk.random.seed(1234)
    x = gk.random.rand(N // 4, 4, dtype=dtype)
    assert x.shape == (N // 4, 4) and x.dtype == dtype
    v = x.to_numpy().astype(np.float64).reshape(-1)
    assert v.min() >= 0.0 and v.max() < 1.0
    within(v.mean(), 0.5, math.sqrt(1 / 12 / N))
    within(v.var(), 1 / 12, math.sqrt((1 / 80 - 1 / 144) / N))
    bits = {"float16": 11, "float32": 24, "float64": 53}[dtype]
    scaled = v * 2.0**bits
    np.testing.assert_array_equal(scaled, np.floor(scaled))  # a multiple of 2^-bits
    if bits <= 24:  # every bit is used: the low bit is set about half the time
        within((scaled % 2).mean(), 0.5, math.sqrt(0.25 / N))


@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_moments(backend, dtype):
    gk.random.seed(99)
    z = gk.random.randn(N + 3, dtype=dtype)  # odd size: the last group is partial
    assert z.shape == (N + 3,) and z.dtype == dtype
    v = z.to_numpy().astype(np.float64)
    assert np.isfinite(v).all()
    within(v.mean(), 0.0, 1 / math.sqrt(N))
    within(v.var(), 1.0, math.sqrt(2 / N))
    within(((v - v.mean()) ** 3).mean(), 0.0, math.sqrt(15 / N))  # skewness
    within(((v - v.mean()) ** 4).mean(), 3.0, math.sqrt(96 / N))  # kurtosis
    p = math.erf(1 / math.sqrt(2))
    within((np.abs(v) < 1).mean(), p, math.sqrt(p * (1 - p) / N))


def test_uniform_and_normal_parameters(backend):
    gk.random.seed(5)
    u = gk.random.uniform(-3.0, 5.0, size=(N,)).to_numpy()
    assert u.min() >= -3.0 and u.max() < 5.0
    within(u.mean(), 1.0, 8 / math.sqrt(12 * N))
    z = gk.random.normal(10.0, 0.5, size=N, dtype="float32").to_numpy().astype(np.float64)
    within(z.mean(), 10.0, 0.5 / math.sqrt(N))
    within(z.std(), 0.5, 0.5 * math.sqrt(0.5 / N))
    with pytest.raises(ValueError, match="scale"):
        gk.random.normal(0.0, -1.0, size=3)


@pytest.mark.parametrize(
    "low,high,dtype",
    [
        (0, 6, "int64"),
        (-5, 3, "int8"),
        (0, 256, "uint8"),
        (-(2**31), 2**31 - 1, "int32"),
        (10, 10 + 2**32, "int64"),  # the largest 32-bit-draw range
        (-(2**63), 2**63 - 1, "int64"),  # 64-bit draws
        (0, 2**64, "uint64"),  # range 2^64
    ],
)
def test_randint_bounds_and_uniformity(backend, low, high, dtype):
    gk.random.seed(2024)
    x = gk.random.randint(low, high, size=(N,), dtype=dtype)
    assert x.dtype == dtype and x.shape == (N,)
    v = x.to_numpy()
    assert int(v.min()) >= low and int(v.max()) < high
    span = high - low
    # Each value's cell [v, v + 1) within [low, high), its middle as a fraction: mean 1/2.
    frac = (v.astype(np.float64) - float(low) + 0.5) / float(span)
    within(frac.mean(), 0.5, math.sqrt(1 / 12 / N))
    if span <= 256:  # every value appears, each about N / span times
        counts = np.bincount((v.astype(np.int64) - low), minlength=span)
        p = 1 / span
        assert counts.min() > 0
        assert np.abs(counts / N - p).max() <= 6 * math.sqrt(p * (1 - p) / N)


def test_randint_forms_and_errors(backend):
    assert gk.random.randint(5).shape == ()
    assert 0 <= int(gk.random.randint(5)) < 5
    assert gk.random.randint(3, size=7).shape == (7,)
    with pytest.raises(ValueError, match="low >= high"):
        gk.random.randint(3, 3)
    with pytest.raises(ValueError, match="out of bounds for int8"):
        gk.random.randint(0, 300, dtype="int8")
    with pytest.raises(ValueError, match="out of bounds for uint8"):
        gk.random.randint(-1, 3, dtype="uint8")
    with pytest.raises(TypeError, match="integer dtype"):
        gk.random.randint(0, 3, dtype="float32")
    with pytest.raises(TypeError, match="floating dtype"):
        gk.random.rand(3, dtype="int32")
    with pytest.raises(ValueError, match="negative"):
        gk.random.seed(-1)
    with pytest.raises(ValueError, match="negative dimensions"):
        gk.random.rand(-2)


def test_determinism_and_fresh_numbers(backend):
    gk.random.seed(7)
    a = gk.random.rand(1000).to_numpy()
    b = gk.random.rand(1000).to_numpy()
    gk.random.seed(7)
    np.testing.assert_array_equal(gk.random.rand(1000).to_numpy(), a)
    np.testing.assert_array_equal(gk.random.rand(1000).to_numpy(), b)
    assert (a != b).mean() > 0.99  # the next call draws other numbers
    g1, g2 = gk.random.Generator(11), gk.random.Generator(12)
    assert (g1.rand(100).to_numpy() != g2.rand(100).to_numpy()).mean() > 0.99
    # Counter-based: an element does not depend on how many were drawn with it.
    np.testing.assert_array_equal(
        gk.random.Generator(3).randn(5).to_numpy(), gk.random.Generator(3).randn(999)[:5].to_numpy()
    )
    assert gk.random.rand().shape == ()
    assert gk.random.rand((2, 3)).shape == (2, 3)
    assert gk.random.rand(0, 4).shape == (0, 4)


CALLS = [
    ("rand", lambda g: g.rand(1001, dtype="float32")),
    ("rand16", lambda g: g.rand(5, 7, dtype="float16")),
    ("rand64", lambda g: g.rand(1001)),
    ("randint", lambda g: g.randint(-7, 100, size=999, dtype="int16")),
    ("randint64", lambda g: g.randint(0, 2**40, size=999)),
    ("randn", lambda g: g.randn(1001, dtype="float32")),
    ("randn64", lambda g: g.randn(1001)),
    ("randn16", lambda g: g.randn(33, dtype="float16")),
    ("normal", lambda g: g.normal(2.0, 3.0, size=99)),
    ("normal32", lambda g: g.normal(-1.0, 0.1, size=(3, 67), dtype="float32")),
    ("uniform", lambda g: g.uniform(-2.5, 7.0, size=1003)),
    ("uniform32", lambda g: g.uniform(0.1, 0.3, size=1003, dtype="float32")),
    ("empty", lambda g: g.randn(0, 3)),
]


def test_same_seed_same_numbers_on_every_backend():
    backends = gk.available_backends()
    results = {}
    for name in backends:
        with gk.use_backend(name):
            g = gk.random.Generator(2**40 + 17)
            results[name] = [(label, call(g).to_numpy()) for label, call in CALLS]
    ref = results[backends[0]]
    for name in backends[1:]:
        for (label, want), (_, got) in zip(ref, results[name], strict=True):
            assert got.dtype == want.dtype, label
            np.testing.assert_array_equal(got, want, err_msg=f"{label} on {name}")
