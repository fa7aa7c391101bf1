"""The Householder QR panel on CUDA in its two forms (kernels/linalg_qr.cu): one thread-block
cluster per matrix (gk_qr_panel_cluster, sm_90+, taken past GK_QR_THREADS rows) against one block
per matrix (gk_qr_panel), on panels that are views of a larger matrix (a trailing matrix's first
columns, as the blocked QR passes them). The two sum in different orders, so they agree to
rounding, each the same bits on every run; Q R rebuilds the panel either way."""

import numpy as np
import pytest

import gpukit as gk
from gpukit import linalg_steps as st
from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS


@pytest.fixture
def cuda(backend):
    if backend != "cuda":
        pytest.skip("the CUDA planner's panel step")
    return backend


def _panel(x, cluster):
    count, m, nb = x.shape
    outs = [((count, m, nb), x.dtype), ((count, nb, nb), x.dtype), ((count, nb, nb), x.dtype)]
    return [o.to_numpy() for o in st.run("qr_panel", [x], outs, (("cluster", cluster),))]


def _rebuilt(v, r, neg_t):
    """Q R's first nb columns: (I - V T V^T) [R; 0]."""
    m, nb = v.shape[-2:]
    top = np.zeros((*v.shape[:-2], m, nb))
    top[..., :nb, :] = r
    return top + v @ (neg_t @ (np.swapaxes(v, -1, -2) @ top))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("m", "nb", "count"), [(600, 32, 1), (4099, 32, 1), (1000, 17, 3)])
def test_cluster_against_one_block(cuda, rng, dtype, m, nb, count):
    if tuple(gk.zeros(1)._rt.device.compute_capability) < (9, 0):
        pytest.skip("thread-block clusters: sm_90+")
    host = rng.standard_normal((count, m, nb + 7)).astype(dtype)
    x = gk.asarray(host)[:, :, :nb]  # a view: rows nb + 7 apart
    one, clu = _panel(x, False), _panel(x, True)
    again = _panel(x, True)
    for a, b in zip(clu, again, strict=True):
        np.testing.assert_array_equal(a, b)
    tol = 50 * np.finfo(dtype).eps * m**0.5
    for a, b in zip(one, clu, strict=True):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * np.abs(a).max())
    got = _rebuilt(*(c.astype(np.float64) for c in clu))
    ref = host[:, :, :nb].astype(np.float64)
    assert np.abs(got - ref).max() <= tol * np.abs(ref).max()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cluster_path_on_sm90(cuda, dtype):
    """On an sm_90+ device the planner takes the cluster past GK_QR_THREADS rows (so that qr's
    parity tests of larger matrices test it), for one matrix and a stack."""
    from gpukit.runtime.cuda import linalg_qr

    rt = gk.zeros((1,), dtype=dtype)._rt
    if tuple(rt.device.compute_capability) < (9, 0):
        pytest.skip("thread-block clusters: sm_90+")
    file, defines = kernels.linalg_qr(np.dtype(dtype))
    for m, count in ((4096, 1), (CONSTANTS["GK_QR_THREADS"] + 1, 1), (2000, 300)):
        plan = linalg_qr._cluster(rt, file, defines, np.dtype(dtype), m, 32, count)
        assert plan is not None, (m, count)
        assert plan[1] * CONSTANTS["GK_QR_CLUSTER"] >= m and plan[1] >= 32
