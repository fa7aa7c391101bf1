"""softmax, log_softmax, layer_norm and rms_norm over every row shape the kernels plan for (a warp
per row, a block per row from registers, streamed rows, rows split over blocks), strided rows, and
the norms' fused residual form, against float64 NumPy; the same bits on every run."""

import numpy as np
import pytest
from conftest import TOLERANCE, assert_matches, random_array
from rows_reference import rows_f64

import gpukit as gk
from gpukit import nn

WIDTHS = [1, 31, 64, 1000, 1025, 4096, 16384, 20000, 65536]


def _run(kind, x, w=None, b=None, eps=1e-5, **kw):
    if kind == "layer_norm":
        return nn.layer_norm(x, w, b, eps, **kw)
    if kind == "rms_norm":
        return nn.rms_norm(x, w, eps, **kw)
    return getattr(nn, kind)(x, **kw)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layer_norm", "rms_norm"])
def test_every_width_float32(backend, rng, kind, width):
    rows = 3 if width >= 16384 else 37
    x = random_array(rng, (rows, width), "float32") * 2
    w = (1 + 0.5 * random_array(rng, (width,), "float32")).astype(np.float32)
    b = random_array(rng, (width,), "float32")
    args = (w, b if kind == "layer_norm" else None) if kind.endswith("norm") else (None, None)
    got = _run(kind, gk.asarray(x), *args)
    ref = rows_f64(kind, x, *args)
    assert_matches(got, ref.astype(np.float32), "float32", scale=2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
@pytest.mark.parametrize("width", [64, 1025, 4096, 20000])
@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layer_norm", "rms_norm"])
def test_other_dtypes(backend, rng, dtype, width, kind):
    x = random_array(rng, (5, width), dtype)
    got = _run(kind, gk.asarray(x))
    ref = rows_f64(kind, x)
    assert_matches(got, ref.astype(np.float64).astype(x.dtype), x.dtype, scale=2)


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
@pytest.mark.parametrize("width", [31, 1025, 20000])
def test_strided_rows_and_any_axis(backend, rng, kind, width):
    x = random_array(rng, (6, 2 * width), "float32")
    a = gk.asarray(x)
    assert_matches(getattr(nn, kind)(a[:, ::2]), rows_f64(kind, x[:, ::2]), "float32", 2)
    assert_matches(
        getattr(nn, kind)(a[:, :width].T, axis=0),
        rows_f64(kind, x[:, :width].T, axis=0),
        "float32",
        2,
    )


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("width", [64, 4096, 20000])
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_fused_residual(backend, rng, dtype, width, kind):
    x = random_array(rng, (4, width), dtype)
    r = random_array(rng, (4, width), dtype)
    w = (1 + 0.1 * random_array(rng, (width,), "float32")).astype(x.dtype)
    b = random_array(rng, (width,), dtype) if kind == "layer_norm" else None
    y, h = _run(kind, gk.asarray(x), w, b, residual=gk.asarray(r))
    h_ref = (x.astype(np.float32) + r.astype(np.float32)).astype(x.dtype)  # rounded once
    np.testing.assert_array_equal(h.to_numpy().view(np.uint8), h_ref.view(np.uint8))
    ref = rows_f64(kind, h_ref, w, b)
    assert_matches(y, ref.astype(x.dtype), x.dtype, scale=2)
    # the same as the unfused composition
    y2 = _run(kind, gk.asarray(h_ref), w, b)
    np.testing.assert_allclose(
        y.to_numpy().astype(np.float64),
        y2.to_numpy().astype(np.float64),
        rtol=TOLERANCE[y.dtype],
        atol=TOLERANCE[y.dtype],
    )


def test_residual_must_match_x(backend):
    x = gk.ones((2, 8), "float32")
    with pytest.raises(ValueError, match="residual of shape"):
        nn.rms_norm(x, residual=gk.ones((8,), "float32"))
    with pytest.raises(TypeError, match="residual is float16 but x is float32"):
        nn.layer_norm(x, residual=gk.ones((2, 8), "float16"))


@pytest.mark.parametrize("kind", ["softmax", "layer_norm", "rms_norm"])
def test_the_same_bits_on_every_run(backend, rng, kind):
    for shape in ((64, 4096), (2, 65536), (40, 20000)):
        a = gk.asarray(random_array(rng, shape, "float32"))
        first = _run(kind, a).to_numpy().tobytes()
        for _ in range(9):
            assert _run(kind, a).to_numpy().tobytes() == first


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("width", [1025, 4096, 16384])
@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layer_norm", "rms_norm"])
def test_nan_inf_over_poisoned_memory(backend, rng, kind, width, dtype):
    """Rows a block stages whole in shared memory (1025 wide: not whole 16-byte vectors, staged
    element by element), one holding a NaN and one a -inf, written where NaN was just released:
    as rows_f64 (NaN rows stay NaN, a -inf logit is a zero probability). 70 rows of 16384: one
    block each (fewer would be split over blocks), a float32 row filling the 64 KiB staged."""
    x = random_array(rng, (70 if width == 16384 else 6, width), dtype)
    x[1, width // 2] = np.nan
    x[4, width - 1] = -np.inf
    w = (1 + 0.5 * random_array(rng, (width,), "float32")).astype(x.dtype)
    args = (w, None) if kind.endswith("norm") else (None, None)
    del_me = gk.full(x.shape, np.nan, x.dtype)
    del del_me
    got = _run(kind, gk.asarray(x), *args)
    with np.errstate(all="ignore"):
        ref = rows_f64(kind, x, *args)
    assert_matches(got, ref.astype(np.float64).astype(x.dtype), x.dtype, scale=2)
