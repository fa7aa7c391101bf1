"""scikit-learn on GPUArrays through its Array API dispatch: preprocessing, regression metrics and
PCA give GPUArrays on the input's device, equal to NumPy's results within float tolerance.

Where scikit-learn calls a function gpukit does not have yet, the test skips and names it; it
runs by itself once gpukit has it."""

import os

os.environ["SCIPY_ARRAY_API"] = "1"  # scikit-learn's dispatch requires it, set before scipy loads

import array_api_compat
import numpy as np
import pytest
import sklearn
from conftest import random_array
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, StandardScaler
from sklearn.utils._array_api import get_namespace

import gpukit as gk

TOLERANCE = {"float32": 1e-5, "float64": 1e-12}


def _require(what: str, *names: str) -> None:
    missing = [n for n in names if not hasattr(gk, n)]
    if missing:
        pytest.skip(
            f"{what} calls {', '.join('gpukit.' + n for n in missing)}, an elementwise function "
            "gpukit does not have yet"
        )


def _on_numpy(function):
    """`function()` with the dispatch off: scikit-learn's own NumPy result."""
    with sklearn.config_context(array_api_dispatch=False):
        return function()


def _check(got, want, dtype, device) -> None:
    assert isinstance(got, gk.GPUArray) and got.device == device
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_namespace_is_recognised(backend, rng):
    x = gk.asarray(random_array(rng, (3, 2), "float32"))
    assert array_api_compat.is_array_api_obj(x)
    assert array_api_compat.array_namespace(x) is gk
    assert array_api_compat.device(x) == x.device
    with sklearn.config_context(array_api_dispatch=True):
        xp, compliant = get_namespace(x)
    assert xp is gk and compliant


@pytest.mark.parametrize("assume_finite", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "scaler",
    [StandardScaler(), StandardScaler(with_mean=False), MinMaxScaler((-1, 2)), MaxAbsScaler()],
    ids=["standard", "standard-no-mean", "minmax", "maxabs"],
)
def test_scalers(backend, rng, scaler, dtype, assume_finite):
    # their statistics ignore NaN (xp.isnan); input validation checks xp.isfinite
    _require(type(scaler).__name__, "isnan", *([] if assume_finite else ["isfinite"]))
    x = random_array(rng, (37, 5), dtype) * 3 + 1
    X = gk.asarray(np.repeat(x, 2, axis=0))[::2]  # strided rows
    with sklearn.config_context(array_api_dispatch=True, assume_finite=assume_finite):
        fitted = clone(scaler).fit(X)
        got = fitted.transform(X)
        back = fitted.inverse_transform(got)
    want = _on_numpy(lambda: clone(scaler).fit_transform(x))
    _check(got, want, dtype, X.device)
    _check(back, x, dtype, X.device)


@pytest.mark.parametrize("assume_finite", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_normalizer(backend, rng, norm, dtype, assume_finite):
    if not assume_finite:
        _require("check_array's finiteness check", "isfinite")
    x = random_array(rng, (23, 6), dtype)
    X = gk.asarray(x.T.copy()).T  # a transposed view
    with sklearn.config_context(array_api_dispatch=True, assume_finite=assume_finite):
        got = Normalizer(norm=norm).fit_transform(X)
    want = _on_numpy(lambda: Normalizer(norm=norm).fit_transform(x))
    _check(got, want, dtype, X.device)


@pytest.mark.parametrize("assume_finite", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("metric", [r2_score, mean_squared_error, mean_absolute_error])
def test_regression_metrics(backend, rng, metric, dtype, assume_finite):
    if not assume_finite:
        _require("check_array's finiteness check", "isfinite")
    y_true, y_pred = random_array(rng, (41, 3), dtype), random_array(rng, (41, 3), dtype)
    weights = (0.5 + rng.random(41)).astype(dtype)
    tol = TOLERANCE[dtype]
    with sklearn.config_context(array_api_dispatch=True, assume_finite=assume_finite):
        T, P, W = gk.asarray(y_true), gk.asarray(y_pred), gk.asarray(weights)
        scalar = metric(T, P)
        weighted = metric(T[:, 0], P[:, 0], sample_weight=W)
        raw = metric(T, P, multioutput="raw_values")
    want_scalar = _on_numpy(lambda: metric(y_true, y_pred))
    want_weighted = _on_numpy(lambda: metric(y_true[:, 0], y_pred[:, 0], sample_weight=weights))
    want_raw = _on_numpy(lambda: metric(y_true, y_pred, multioutput="raw_values"))
    # scikit-learn returns a Python float for a single score, whatever the namespace
    np.testing.assert_allclose(float(scalar), want_scalar, rtol=tol, atol=tol)
    np.testing.assert_allclose(float(weighted), want_weighted, rtol=tol, atol=tol)
    _check(raw, want_raw, dtype, T.device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pca_full_svd(backend, rng, dtype):
    """PCA(svd_solver="full") through gpukit.linalg.svd. The data's spectrum is fixed (singular
    values 40, 20, 10, 5, 2.5, then 1 and less), so the leading components are well defined for
    every draw; each component is compared up to its sign (svd_flip's choice may differ where two
    entries of a row tie in magnitude)."""
    n, d, k = 300, 9, 4
    u = np.linalg.qr(rng.standard_normal((n, d)))[0]
    v = np.linalg.qr(rng.standard_normal((d, d)))[0]
    s = np.array([40, 20, 10, 5, 2.5, 1, 0.8, 0.6, 0.4])
    x = (u * s @ v.T + rng.standard_normal(d)).astype(dtype)
    X = gk.asarray(x)
    with sklearn.config_context(array_api_dispatch=True):
        pca = PCA(n_components=k, svd_solver="full").fit(X)
        got = pca.transform(X)
    ref = _on_numpy(lambda: PCA(n_components=k, svd_solver="full").fit(x))
    tol = {"float32": 2e-4, "float64": 1e-10}[dtype]
    components = pca.components_.to_numpy()
    signs = np.sign(np.sum(components * ref.components_, axis=1))
    assert isinstance(got, gk.GPUArray) and got.device == X.device and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(components * signs[:, None], ref.components_, atol=tol)
    np.testing.assert_allclose(
        pca.explained_variance_.to_numpy(), ref.explained_variance_, rtol=tol
    )
    np.testing.assert_allclose(got.to_numpy() * signs, ref.transform(x), atol=tol * s[0], rtol=0)
