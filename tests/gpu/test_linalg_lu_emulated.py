"""The blocked LU of CUDA (kernels/linalg_lu.cu, planned by gpukit.runtime.cuda.linalg_lu and
driven by gpukit.decompositions) run on the host: a CPU backend whose linalg plans are the CUDA
planner's, their launches running the emulated kernels (threads as fibers in a random order,
blocks one after another, shared memory poisoned) over the CPU backend's memory, while the
front end's products and copies run on the CPU (tests/gpu/emulator/lu_hybrid.py). The checks are
tests/api/test_linalg_lu.py's, on sizes the emulator runs in seconds. The kernels also compile
with NVRTC for sm_80/89/90 without local memory."""

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

import gpukit as gk
from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS

sys.path.insert(0, str(Path(__file__).resolve().parent / "emulator"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
import emulation
import lu_hybrid
import test_linalg_lu as cases
import test_linalg_lu_panel as panel_cases

pytestmark = pytest.mark.skipif(emulation.compiler() is None, reason="needs g++")
hybrid = lu_hybrid.hybrid  # the shared fixture


def _ran_blocked(rt, *also):
    for name in ("gk_lu_panel", "gk_lu_trinv", *also):
        assert name in rt.emu.launched, name
    rt.emu.launched.clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_solve_and_inv(hybrid, rng, dtype):
    cases.check_solve(rng, dtype, [65, 130])  # 3 right-hand sides: the substitution kernels
    _ran_blocked(hybrid, "gk_lu_fwd_diag", "gk_lu_fwd_update", "gk_lu_bwd")
    cases.check_inv(rng, dtype, [100], batch=(1,))  # 100: the products
    assert "gk_lu_bwd" not in hybrid.emu.launched
    _ran_blocked(hybrid, "gk_lu_swap")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_slogdet_and_singular(hybrid, rng, dtype):
    cases.check_det(rng, dtype, [97], batch=(2,))
    _ran_blocked(hybrid)
    cases.check_singular(rng, dtype, 70)
    _ran_blocked(hybrid)


def test_layouts_repeated_bits_and_small_path(hybrid, rng):
    cases.check_layouts_and_bits(rng, "float64", 66)
    _ran_blocked(hybrid)
    a = cases.pivoting_matrix(rng, 64, "float64", (2,))  # n = 64: still the one-block kernel
    x = gk.linalg.inv(gk.asarray(a)).to_numpy()
    assert "gk_lu_small" in hybrid.emu.launched
    assert not any(name.startswith("gk_lu_panel") for name in hybrid.emu.launched)
    np.testing.assert_allclose(a @ x, np.broadcast_to(np.eye(64), a.shape), atol=1e-12)


def test_many_panels_with_a_remainder(hybrid, rng):
    """Five panels (the last one of one column) and the pivots of a permuted matrix."""
    cases.check_solve(rng, "float64", [257], batch=(), k=2)
    _ran_blocked(hybrid, "gk_lu_bwd")
    a = cases.conditioned(rng, 150, 1e3, "float64", batch=(2,))
    b = rng.standard_normal((2, 150, CONSTANTS["GK_LU_RHS"] + 1))  # more than the kernels take
    x = gk.linalg.solve(gk.asarray(a), gk.asarray(b)).to_numpy()
    assert "gk_lu_swap" in hybrid.emu.launched and "gk_lu_bwd" not in hybrid.emu.launched
    cases._solve_ok(a, x, b, "float64", 1e3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cooperative_panel(hybrid, rng, dtype):
    """The panel in one cluster (16 blocks, run as a cooperative launch: the cluster barrier a
    grid barrier, the other blocks' shared memory read in place; the rows in registers, a row a
    thread, and in shared memory) and in one cooperative launch (every block's threads run
    together through the grid barriers) against the launch per column and NumPy
    (test_linalg_lu_panel.check_panel): 65 rows (cooperative: 3 blocks; the cluster with rows in
    shared memory: 13 blocks of 5 rows and 3 empty; in registers: one block of 65 rows and 15
    empty), 130 in float32 (5 blocks) and 600 in float64 (8 blocks; 16 of 38 rows; 256 + 256 + 88
    rows: minutes in the emulator), a stack of 3 (2 blocks each) at row 40 of the matrix."""
    panel_cases.check_panel(rng, dtype, 65)
    for name in ("gk_lu_panel_regs", "gk_lu_panel_cluster", "gk_lu_panel_coop", "gk_lu_swap"):
        assert name in hybrid.emu.launched, name
    panel_cases.check_panel(rng, dtype, 130 if dtype == "float32" else 600)
    panel_cases.check_panel(rng, dtype, 97, count=3, nb=20, k=40)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("panel", [64, 128, 256])
@pytest.mark.parametrize("lookahead", [True, False])
def test_blocked_cholesky(hybrid, rng, dtype, panel, lookahead):
    """cholesky past the one-block kernel: CUDA's plan of every step (its diagonal blocks by
    gk_chol_small, emulated; its products on the host), trailing updates per panel of 1, 2 and
    4 diagonal blocks, with and without the lookahead's second lane, lower and upper, the
    triangle not read poisoned with NaN."""
    from linalg_cases import hermitian, positive_definite

    hybrid.options["cholesky_blocked"] = (("panel", panel), ("lookahead", lookahead))
    for n, upper in ((100, False), (130, True), (200, False)):
        a = positive_definite(rng, n, 1e3, dtype, batch=(2,))
        poisoned = a.copy()
        rows, cols = np.tril_indices(n, -1) if upper else np.triu_indices(n, 1)
        poisoned[:, rows, cols] = np.nan
        f = gk.linalg.cholesky(gk.asarray(poisoned), upper=upper).to_numpy()
        assert "gk_chol_small" in hybrid.emu.launched
        assert np.all((np.tril(f, -1) if upper else np.triu(f, 1)) == 0)
        f64 = f.astype(np.float64)
        r = (np.swapaxes(f64, -1, -2) @ f64 if upper else f64 @ np.swapaxes(f64, -1, -2)) - a
        assert cases.scaled_residual(r, a, dtype, n) < cases.BOUND, (n, upper)
    lam = np.linspace(1.0, 2.0, 100)
    lam[90] = -1.0  # met past the first diagonal block, in one matrix of the stack
    bad = np.stack([positive_definite(rng, 100, 10.0, dtype), hermitian(rng, 100, lam, dtype)])
    with pytest.raises(gk.LinAlgError, match="positive definite"):
        gk.linalg.cholesky(gk.asarray(bad))


def test_blocked_cholesky_refuses_a_panel_not_of_whole_blocks(hybrid, rng):
    from linalg_cases import positive_definite

    hybrid.options["cholesky_blocked"] = (("panel", 100),)
    with pytest.raises(ValueError, match="panel 100 is not a positive multiple of 64"):
        gk.linalg.cholesky(gk.asarray(positive_definite(rng, 70, 10.0, "float32")))


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_kernels_compile_without_local_memory(arch):
    emulation.compile_without_local_memory(
        arch, [kernels.linalg_lu(dtype) for dtype in ("float32", "float64")]
    )


def _repeating_pivots(n, k, w):
    """A panel's pivots (absolute) that swap inside the panel, meet one row below three times
    and the last row once, and leave most rows in place."""
    rel = np.arange(w)
    rel[[3, 5, 7, 40, 41, 50, 60]] = [10, 100, 100, 100, 63, n - k - 1, 61]
    piv = np.zeros((1, n), np.int32)
    piv[0, k : k + w] = k + rel
    return piv, rel


def _lu_launch(tmp_path_factory, rng, kernel, grid, **fields):
    from gpukit.runtime.args import arg_struct

    run = emulation.build_one("linalg_lu.cu", kernel, "gk_lu_args", ("GK_T=double",),
                              tmp_path_factory.mktemp("lu_one"))  # fmt: skip
    s = arg_struct("gk_lu_args")
    blob = s.pack(**{**dict.fromkeys(s.fields, 0), **fields})
    buf = ctypes.create_string_buffer(bytes(blob), len(blob))
    run(buf, *grid, CONSTANTS["GK_LU_THREADS"], 0, int(rng.integers(1 << 30)))


def test_interchanges_meeting_the_same_rows(tmp_path_factory, rng):
    """gk_lu_fwd_diag and gk_lu_swap alone on repeating pivots, against the interchanges done
    one after another (gk_lu_swap: three blocks of columns, the last one partial)."""
    n, k, w = 150, 20, 64
    piv, rel = _repeating_pivots(n, k, w)
    for kernel, r in (("gk_lu_fwd_diag", 5), ("gk_lu_swap", 2 * CONSTANTS["GK_LU_SWAP_COLS"] + 7)):
        x = rng.standard_normal((1, n, r))
        neg_linv = -np.linalg.inv(np.tril(rng.standard_normal((w, w)), -1) / w + np.eye(w))[None]
        ref = x[0].copy()
        for i in range(w):
            ref[[k + i, k + rel[i]]] = ref[[k + rel[i], k + i]]
        if kernel == "gk_lu_fwd_diag":
            ref[k : k + w] = -neg_linv[0] @ ref[k : k + w]
            grid, rows = (1, 1, 1), x
        else:  # X is the rows k.. there
            grid, rows = (-(-r // CONSTANTS["GK_LU_SWAP_COLS"]), 1, 1), x[:, k:]
            rows = np.ascontiguousarray(rows)
        _lu_launch(tmp_path_factory, rng, kernel, grid, a=rows.ctypes.data, piv=piv.ctypes.data,
                   out=neg_linv.ctypes.data, ld=r, stride=rows[0].size, m=n - k, r=r, n=n, k=k,
                   nb=w)  # fmt: skip
        got = rows[0] if kernel == "gk_lu_fwd_diag" else np.concatenate([x[0, :k], rows[0]])
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=kernel)
