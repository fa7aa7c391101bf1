"""The blocked LU's panel step ("lu_panel" of the CUDA planner, runtime/cuda/linalg_lu.py) alone:
the cluster kernels (sm_90+: one thread-block cluster of 16 blocks per matrix, a cluster barrier
per column, the candidates through distributed shared memory; gk_lu_panel_regs with a row in each
thread's registers, the planner's choice where the rows fit, and gk_lu_panel_cluster with the
rows in shared memory, the option regs=False) and the cooperative kernel (gk_lu_panel_coop, one
launch per panel with a grid barrier per column, the option cluster=False), each then gk_lu_swap
over the columns after the panel, against the launch per column (gk_lu_panel, the option
cooperative=False) bit for bit, and all against NumPy's float64 getf2 of the panel: pivot rows
(exactly, where the pivots are clear; else each chosen pivot the largest magnitude of its column
to rounding), L and U, the row interchanges of the trailing columns (exact: values move), U's
diagonal, info on an exactly zero pivot (its column left), the same bits on a second run, the
launch counter left zero; a NaN and an all-NaN column give every path the same bits. Inputs are
strided (row stride past the matrix) and the outputs poisoned first. check_panel also runs on the
host through the emulated kernels (tests/gpu/test_linalg_lu_emulated.py); here on a CUDA device,
with a CUDA graph replay."""

import numpy as np
import pytest

import gpukit as gk
from gpukit import linalg_steps
from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS

NB = CONSTANTS["GK_LU_NB"]


def _pivoting(rng, count, m, dtype):
    """Rows of a diagonally dominant matrix in random order: the pivot of step j is the row
    that holds the dominant entry of column j (clear by far), so the pivot rows are known."""
    d = rng.standard_normal((count, m, m)) + 3 * np.sqrt(m) * np.eye(m)
    perms = np.stack([rng.permutation(m) for _ in range(count)])
    a = np.stack([d[i][perms[i]] for i in range(count)])
    return a.astype(dtype), perms


def getf2(a, nb, k=0):
    """NumPy float64 getf2 on the first nb columns of each m x m matrix of a (count x m x m), the
    interchanges applied across all columns, the pivot rows chosen as the kernels choose (the
    first row of largest magnitude; a zero pivot leaves its column): (T, piv (absolute, from
    k), diag, info)."""
    t = a.astype(np.float64).copy()
    count = t.shape[0]
    piv = np.zeros((count, nb), np.int64)
    diag = np.zeros((count, nb))
    info = np.zeros(count, np.int32)
    for i in range(count):
        x = t[i]
        for j in range(nb):
            p = j + int(np.argmax(np.abs(x[j:, j])))
            piv[i, j] = k + p
            x[[j, p]] = x[[p, j]]
            d = x[j, j]
            diag[i, j] = d
            if d == 0:
                info[i] = 1
                continue
            x[j + 1 :, j] *= 1.0 / d
            x[j + 1 :, j + 1 : nb] -= np.outer(x[j + 1 :, j], x[j, j + 1 : nb])
    return t, piv, diag, info


def _replay_pivots(a, piv, nb, k=0):
    """getf2 of a in float64 with the given pivot rows; how far each chosen pivot falls short of
    its column's largest magnitude (relative), and the result."""
    t = a.astype(np.float64).copy()
    short = np.zeros(piv.shape)
    for i in range(t.shape[0]):
        x = t[i]
        for j in range(nb):
            p = int(piv[i, j]) - k
            best = np.max(np.abs(x[j:, j]))
            short[i, j] = (best - abs(x[p, j])) / max(best, 1e-300)
            x[[j, p]] = x[[p, j]]
            if x[j, j] != 0:
                x[j + 1 :, j] *= 1.0 / x[j, j]
                x[j + 1 :, j + 1 : nb] -= np.outer(x[j + 1 :, j], x[j, j + 1 : nb])
    return short, t


def _strided(a):
    """a (count x m x m) on the device as a view whose rows are 3 elements apart further."""
    count, m, _ = a.shape
    big = np.full((count, m, m + 3), np.nan, a.dtype)
    big[:, :, :m] = a
    return gk.asarray(big)[:, :, :m]


PATHS = ("regs", "cluster", "cooperative", "column")


def run_panel(a, nb, path, k=0, n=None):
    """lu_panel over a copy of a (count x m x m, strided on the device) through `path` (PATHS;
    where the device has no cluster launch, "regs" and "cluster" are the cooperative path, and
    where the rows do not fit the threads, "regs" is "cluster"): (T, piv, diag, info, counter)
    read back, piv and diag poisoned before; the plan's copy of the factored panel checked
    against T's first nb columns."""
    count, m, _ = a.shape
    n = m + k if n is None else n
    t = _strided(a)
    piv = gk.asarray(np.full((count, n), -7, np.int32))
    diag = gk.asarray(np.full((count, n), np.nan, a.dtype))
    info = gk.asarray(np.zeros(count, np.int32))
    counter = gk.asarray(np.zeros(count, np.uint32))
    options = (("k", k), ("n", n), ("nb", nb), ("cooperative", path != "column"),
               ("cluster", path in ("regs", "cluster")), ("regs", path == "regs"))  # fmt: skip
    (copy,) = linalg_steps.run("lu_panel", [t, piv, diag, info, counter], [((count, m, nb),
                               a.dtype)], options)  # fmt: skip
    got = tuple(x.to_numpy() for x in (t, piv, diag, info, counter))
    assert copy.to_numpy().tobytes() == np.ascontiguousarray(got[0][:, :, :nb]).tobytes(), path
    return got


def _tolerance(dtype, m):
    return (50 if np.dtype(dtype) == np.float32 else 1000) * np.sqrt(m) * np.finfo(dtype).eps


def check_panel(rng, dtype, m, count=1, nb=NB, k=0):
    """Both paths on a clear-pivot matrix, a random one and a singular one (see the module)."""
    nb = min(nb, m)
    clear, perms = _pivoting(rng, count, m, dtype)
    noise = rng.standard_normal((count, m, m)).astype(dtype)
    singular = rng.standard_normal((count, m, m)).astype(dtype)
    zero_col = min(5, nb - 1)
    singular[-1, :, zero_col] = 0  # the last matrix: an exactly zero column in the panel
    nan = rng.standard_normal((count, m, m)).astype(dtype)
    nan[0, m // 3, 1] = np.nan  # a NaN in the panel: never the pivot, it spreads as it will
    nan[0, :, min(3, nb - 1)] = np.nan  # a column all NaN: no candidate, row j kept
    per_column = run_panel(nan, nb, "column", k)
    for path in PATHS[:-1]:
        got = run_panel(nan, nb, path, k)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(got, per_column, strict=True)), (
            "nan",
            path,
        )
    for name, a in (("clear", clear), ("random", noise), ("singular", singular)):
        per_column = run_panel(a, nb, "column", k)
        for path in PATHS[:-1]:
            got = run_panel(a, nb, path, k)
            for x, y, what in zip(
                got, per_column, ("T", "piv", "diag", "info", "counter"), strict=True
            ):
                assert x.tobytes() == y.tobytes(), (name, what, path, "vs per column")
        got = run_panel(a, nb, "regs", k)
        again = run_panel(a, nb, "regs", k)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(got, again, strict=True)), (
            name,
            "repeat",
        )
        t, piv, diag, info, counter = got
        assert np.all(counter == 0), name
        assert np.all(piv[:, :k] == -7) and np.all(piv[:, k + nb :] == -7), name
        piv = piv[:, k : k + nb]
        if name == "clear":  # step j's pivot: the row now holding the dominant entry of j
            want = np.stack([np.argsort(perms[i])[:nb] for i in range(count)])
            # earlier interchanges move rows: follow them
            for i in range(count):
                rows = np.arange(m)
                for j in range(nb):
                    p = int(np.nonzero(rows == want[i, j])[0][0])
                    want[i, j] = p
                    rows[[j, p]] = rows[[p, j]]
            np.testing.assert_array_equal(piv - k, want, err_msg=name)
        short, ref = _replay_pivots(a, piv, nb, k)
        assert np.all(short <= _tolerance(dtype, m)), (name, short.max())
        assert np.all(piv - k >= np.arange(nb)) and np.all(piv - k < m), name
        # the trailing columns: the interchanges only (values move, exactly)
        np.testing.assert_array_equal(t[:, :, nb:], ref[:, :, nb:].astype(dtype), err_msg=name)
        scale = np.max(np.abs(a.astype(np.float64)), axis=(1, 2))[:, None, None]
        err = np.abs(t[:, :, :nb] - ref[:, :, :nb]) / np.maximum(scale, 1)
        assert np.all(err <= _tolerance(dtype, m) * 10), (name, err.max())
        on_diagonal = np.arange(nb)
        d = diag[:, k : k + nb]
        np.testing.assert_array_equal(d, t[:, on_diagonal, on_diagonal], err_msg=name)
        d_err = np.abs(d - ref[:, on_diagonal, on_diagonal]) / np.maximum(scale[:, :, 0], 1)
        assert np.all(d_err <= _tolerance(dtype, m) * 10), (name, d_err.max())
        if name == "singular":
            assert info[-1] == 1 and np.all(info[:-1] == 0), info
            assert diag[-1, k + zero_col] == 0
            # the zero column is left: its entries below the diagonal stay zero
            assert np.all(t[-1, zero_col + 1 :, zero_col] == 0)
        else:
            assert np.all(info == 0), (name, info)
        if name == "clear":  # NumPy's float64 getf2 reaches the same pivots
            np.testing.assert_array_equal(piv, getf2(a, nb, k)[1], err_msg=name)


@pytest.fixture
def cuda(backend):
    if backend != "cuda":
        pytest.skip("the CUDA planner's panel step")
    return backend


def _cluster_plan(dtype, m, count=1):
    """linalg_lu._cluster's choice on this device (None: no cluster launch here)."""
    from gpukit.runtime.cuda import linalg_lu

    rt = gk.zeros((1,), dtype=dtype)._rt
    file, defines = kernels.linalg_lu(np.dtype(dtype))
    return linalg_lu._cluster(rt, file, defines, np.dtype(dtype), m, count)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m", [65, 131, 1000, 4099])
def test_panel_one_matrix(cuda, rng, dtype, m):
    check_panel(rng, dtype, m)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cluster_path_on_sm90(cuda, dtype):
    """On an sm_90+ device the planner takes a cluster kernel (so the parity tests above test
    it), up to 4099 rows in either dtype and for a stack beyond the SMs' count: the kernel with
    the rows in registers where they fit one a thread, else the one with the rows in shared
    memory."""
    rt = gk.zeros((1,), dtype=dtype)._rt
    if tuple(rt.device.compute_capability) < (9, 0):
        pytest.skip("thread-block clusters: sm_90+")
    most = CONSTANTS["GK_LU_REGS_THREADS_F32" if dtype == "float32" else "GK_LU_REGS_THREADS_F64"]
    blocks = CONSTANTS["GK_LU_CLUSTER"]
    for m, count in ((4099, 1), (65, 1), (300, 500), (blocks * most, 1), (blocks * most + 1, 1)):
        plan = _cluster_plan(dtype, m, count)
        want = "regs" if m <= blocks * most else "cluster"
        assert plan is not None and plan[4] == want, (m, count)
        assert plan[1] == blocks and plan[2] * plan[1] >= m


def test_panel_big_stack(cuda, rng):
    """A stack of more matrices than clusters resident at once: one launch (the clusters run in
    turn), the per-column path's bits."""
    a = rng.standard_normal((300, 70, 70)).astype("float32")
    want = run_panel(a, NB, "column")
    for path in ("regs", "cluster"):
        got = run_panel(a, NB, path)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(got, want, strict=True)), path


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_panel_stack_and_offset(cuda, rng, dtype):
    check_panel(rng, dtype, 131, count=3, k=40)
    check_panel(rng, dtype, 70, count=2, nb=6)  # the last panel of a blocked LU: narrower


def test_panel_in_a_graph(cuda, rng):
    """lu_panel captured into a CUDA graph and replayed gives the eager launch's bits: while
    capturing, the planner takes the cluster kernel (a plain launch) on sm_90+, else the launch
    per column (a cooperative cuLaunchKernelEx with a parameter buffer fails under capture),
    which compute the same bits."""
    a = rng.standard_normal((1, 300, 300)).astype("float32")
    want = run_panel(a, NB, "regs")
    t = _strided(a)
    piv = gk.asarray(np.full((1, 300), -7, np.int32))  # run_panel's poison: compared below
    diag = gk.asarray(np.full((1, 300), np.nan, np.float32))
    info = gk.asarray(np.zeros(1, np.int32))
    counter = gk.asarray(np.zeros(1, np.uint32))
    options = (("k", 0), ("n", 300), ("nb", NB), ("cooperative", True), ("cluster", True),
               ("regs", True))  # fmt: skip
    clustered = _cluster_plan("float32", 300) is not None
    with gk.graph() as g:
        linalg_steps.run("lu_panel", [t, piv, diag, info, counter], [], options)
    assert g.nodes == (2 if clustered else NB + 1)  # the cluster and gk_lu_swap, or per column
    g.replay()
    got = tuple(x.to_numpy() for x in (t, piv, diag, info, counter))
    for x, y in zip(got, want, strict=True):
        assert x.tobytes() == y.tobytes()
    g.release()
    # and det (no read back: capturable) past the small kernel, in a graph
    m = rng.standard_normal((200, 200)) + 20 * np.eye(200)
    src = gk.asarray(m)
    eager = gk.linalg.det(src).to_numpy()
    g = gk.graph(gk.linalg.det, src)
    np.testing.assert_array_equal(g.replay().to_numpy(), eager)
    g.release()
