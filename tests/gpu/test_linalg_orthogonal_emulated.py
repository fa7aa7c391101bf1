"""CUDA's qr (blocked Householder over kernels/linalg_qr.cu), svd and eigh (one-sided Jacobi,
kernels/linalg_svj.cu) run on the host: a CPU backend whose linalg plans are the CUDA planner's,
their launches running the emulated kernels (threads as fibers in a random order, blocks one
after another, shared memory poisoned) over the CPU backend's memory, while the front end's
products and other ops run on the CPU (tests/gpu/emulator/lu_hybrid.py). The checks are
tests/api/test_linalg_orthogonal.py's, on sizes the emulator runs in seconds; the paths that
larger matrices take on a GPU are reached here at small sizes by lowering the limits the front
end reads (blocks of rows, rows shortened by a QR, a panel partly outside shared memory). The
kernels also compile with NVRTC for sm_80/89/90 without local memory."""

import sys
from pathlib import Path

import numpy as np
import pytest

from gpukit.runtime import kernels

sys.path.insert(0, str(Path(__file__).resolve().parent / "emulator"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
import emulation
import lu_hybrid
import test_linalg_orthogonal as cases

pytestmark = pytest.mark.skipif(emulation.compiler() is None, reason="needs g++")
hybrid = lu_hybrid.hybrid  # the shared fixture


def _ran(rt, *names):
    for name in names:
        assert name in rt.emu.launched, name
    rt.emu.launched.clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qr(hybrid, rng, dtype):
    cases.check_qr(rng, dtype, [(1, 1), (5, 3), (3, 5), (33, 33), (70, 40), (40, 70)])
    _ran(hybrid, "gk_qr_panel")
    cases.check_qr(rng, dtype, [(9, 6)], batch=())  # one matrix: Q's identity is a copy
    cases.check_qr_rank_deficient(rng, dtype, 37, 20)


def test_qr_panel_rows_outside_shared_memory(hybrid, rng):
    """A device with room for 40 rows of a float64 panel: the rest are factored in global
    memory (the V output)."""
    hybrid.emu.device.max_shared_per_block_optin = 16 * 1024 + 40 * 33 * 8
    cases.check_qr(rng, "float64", [(100, 45)])
    cases.check_qr(rng, "float32", [(130, 33)])
    _ran(hybrid, "gk_qr_panel")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qr_panel_cluster(hybrid, rng, dtype):
    """The panel in one cluster (sm_90+; taken past GK_QR_THREADS rows, forced here at sizes the
    emulator runs quickly): rows split across the blocks (rows 0 .. nb - 1 block 0's; at 70
    rows 3 blocks hold rows, 13 none), the column sums exchanged between them."""
    hybrid.options["qr_panel"] = (("cluster", True),)
    cases.check_qr(rng, dtype, [(70, 40)])
    _ran(hybrid, "gk_qr_panel_cluster")
    cases.check_qr_rank_deficient(rng, dtype, 37, 20)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_one_launch(hybrid, rng, dtype):
    """min(m, n) <= GK_SVJ_ROWS: one launch sweeps until converged (the accumulated rotations
    in shared memory), tall, wide and square, full and thin, with zero singular values."""
    cases.check_svd(rng, dtype, [(1, 1), (2, 2), (7, 7), (12, 5), (5, 12), (20, 20)])
    _ran(hybrid, "gk_svj")
    cases.check_svd(rng, dtype, [(6, 6)], batch=(1,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_blocks_of_rows(hybrid, rng, dtype):
    """The blocked sweeps (pairs of blocks of rows, a launch per round), reached at small sizes
    by taking 6 rows as the most one launch sweeps whole; a matrix of an odd number of blocks
    and one of a partial block."""
    hybrid.limits["svj_whole"] = 6
    cases.check_svd(rng, dtype, [(13, 13), (20, 9), (9, 20)])
    _ran(hybrid, "gk_svj")


def test_svd_of_long_rows_through_qr(hybrid, rng):
    """Rows longer than the kernel takes (here 16) are shortened by a QR first."""
    hybrid.limits["svj"] = 16
    cases.check_svd(rng, "float64", [(40, 6), (6, 40)])
    _ran(hybrid, "gk_qr_panel", "gk_svj")
    hybrid.limits["svj_whole"] = 4
    cases.check_svd(rng, "float32", [(30, 9)])
    _ran(hybrid, "gk_qr_panel", "gk_svj")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_rank_deficient(hybrid, rng, dtype):
    """Columns spanning a subspace exactly (repeated and zero columns, polyfit's Vandermonde
    matrix of repeated nodes), on which the sweeps rotated noise until GK_LA_SWEEPS before
    rows of norm at most eps ||A||_F were set to zero: one launch, blocks of rows, rows
    shortened by a QR first; eigh of a singular shifted matrix."""
    cases.check_svd_rank_deficient(rng, dtype, [(12, 5), (5, 12), (33, 33)])
    _ran(hybrid, "gk_svj")
    hybrid.limits["eigh"] = 4
    cases.check_eigh_singular_shift(rng, dtype, 9)
    hybrid.limits["svj_whole"] = 6
    cases.check_svd_rank_deficient(rng, dtype, [(20, 13), (13, 20)])
    cases.check_eigh_singular_shift(rng, dtype, 13)
    _ran(hybrid, "gk_svj")
    hybrid.limits["svj"] = 16
    cases.check_svd_rank_deficient(rng, dtype, [(40, 6)])
    _ran(hybrid, "gk_qr_panel", "gk_svj")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_extreme_scales(hybrid, rng, dtype):
    """Entries whose squares underflow (the sums were zero: zero singular values) or overflow
    (infinite: raised), divided by their largest magnitude first: one launch, blocks of rows,
    rows shortened by a QR first (whose column norms underflowed too)."""
    cases.check_svd_extreme_scales(rng, dtype, [(12, 5), (5, 12)])
    hybrid.limits["svj_whole"] = 6
    cases.check_svd_extreme_scales(rng, dtype, [(20, 13)])
    _ran(hybrid, "gk_svj")
    hybrid.limits["svj"] = 16
    cases.check_svd_extreme_scales(rng, dtype, [(40, 6), (6, 40)])
    _ran(hybrid, "gk_qr_panel", "gk_svj")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_composed(hybrid, rng, dtype):
    cases.check_composed(rng, dtype, 14, 9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eigh(hybrid, rng, dtype):
    """eigh past the two-sided kernel (taken here as 4 rows): one launch up to GK_SVJ_ROWS,
    then blocks of rows (taken here past 8)."""
    hybrid.limits["eigh"] = 4
    cases.check_eigh(rng, dtype, [5, 9])
    _ran(hybrid, "gk_svj")
    hybrid.limits["svj_whole"] = 8
    cases.check_eigh(rng, dtype, [13])
    _ran(hybrid, "gk_svj")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_matrices(hybrid, rng, dtype):
    hybrid.limits["eigh"] = 4
    cases.check_special(rng, dtype, 7)
    hybrid.limits["svj_whole"] = 4
    cases.check_special(rng, dtype, 10)


def test_layouts_repeated_bits_and_small_batches(hybrid, rng):
    hybrid.limits["eigh"] = 4
    cases.check_layouts_and_bits(rng, "float64", 12, 7)
    hybrid.limits["svj_whole"] = 4
    cases.check_layouts_and_bits(rng, "float32", 6, 11)
    hybrid.limits.clear()
    hybrid.limits["eigh"] = 4
    cases.check_svd(rng, "float32", [(8, 8)], batch=(5,))
    cases.check_eigh(rng, "float64", [6], batch=(5,))
    _ran(hybrid, "gk_svj")


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_kernels_compile_without_local_memory(arch):
    emulation.compile_without_local_memory(
        arch,
        [make(dtype) for make in (kernels.linalg_qr, kernels.linalg_svj)
         for dtype in ("float32", "float64")],
    )  # fmt: skip


def test_svj_plan_rejects_what_the_kernel_cannot_hold(hybrid):
    """The planner refuses rows longer than shared memory holds, more rows than one launch
    sweeps whole and negligible norms not one per matrix, with a ValueError rather than a
    launch that would fail or read past them."""
    from gpukit.runtime.backend import Layout
    from gpukit.runtime.cuda import linalg_svj

    f64 = np.dtype("float64")
    longest = linalg_svj.max_len(hybrid.emu, f64)

    def lay(*shape):
        st = [8] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            st[i] = st[i + 1] * shape[i + 1]
        return Layout(f64, shape, tuple(st))

    whole = (("whole", True),)
    with pytest.raises(ValueError, match="rows"):
        linalg_svj.plan_svj(hybrid.emu, (lay(1, 2, longest + 1), lay(1, 2, 2), lay(1)), (), whole)
    with pytest.raises(ValueError, match="rows"):
        linalg_svj.plan_svj(hybrid.emu, (lay(1, 65, 65), lay(1, 65, 65), lay(1)), (), whole)
    with pytest.raises(ValueError, match="negligible"):
        linalg_svj.plan_svj(hybrid.emu, (lay(2, 4, 4), lay(2, 4, 4), lay(1)), (), whole)
