"""kernels/linalg_small.cu run on the CPU through tests/gpu/emulator/gk_emulate.h (a host
g++ build: threads as fibers in a random order between barriers, shared memory poisoned), with
argument blocks packed as gpukit packs them (the host build checks every field's offset) and
NumPy arrays as device memory: Cholesky, LU solve / inverse / det / slogdet against NumPy in
float64, every output element written (outputs start as NaN)."""

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from gpukit.runtime import kernels
from gpukit.runtime.args import CONSTANTS, arg_struct

sys.path.insert(0, str(Path(__file__).parent / "emulator"))
import emulation

ARGS = arg_struct("gk_linalg_args")
THREADS = CONSTANTS["GK_LA_THREADS"]
MODES = {m: CONSTANTS[f"GK_LA_{m.upper()}"] for m in ("solve", "inv", "det", "slogdet")}
SIZES = [1, 2, 3, 7, 16, 17, 33, 64]
GK_MAX_N = CONSTANTS["GK_LA_MAX_N"]
LANES = CONSTANTS["GK_LANES"]


@pytest.fixture(scope="module", params=["float32", "float64"])
def emu(request, tmp_path_factory):
    if emulation.compiler() is None:
        pytest.skip("no host C++ compiler to build the emulated kernels with")
    dtype = np.dtype(request.param)
    t = "double" if dtype == np.float64 else "float"
    so = emulation.build(emulation.HERE / "linalg_driver.cpp", (f"GK_T={t}",),
                         tmp_path_factory.mktemp("linalg_emu"), portable=True)  # fmt: skip
    emulation.check_layout(so, ARGS)
    run = emulation.runner(so.gk_emu_run, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint,
                           ctypes.c_uint, ctypes.c_uint)  # fmt: skip
    return run, dtype


def _run(run, kernel, count, seed, threads=THREADS, **fields):
    ptrs = {k: (v.ctypes.data if isinstance(v, np.ndarray) else 0) for k, v in fields.items()
            if k in ("a", "b", "out", "out2", "info")}  # fmt: skip
    rest = {k: v for k, v in fields.items() if k not in ptrs}
    n = rest.get("n", 0)
    layout = {"ld": n, "stride": n * n, "out_ld": n, "out_stride": n * n}
    blob = ARGS.pack(**{"k": 0, "mode": 0, "upper": 0, **layout, **rest, **ptrs})
    buf = ctypes.create_string_buffer(bytes(blob), len(blob))
    run(buf, kernel, count, threads, seed)


def _tol(dtype, n):
    return 50 * max(n, 1) * np.finfo(dtype).eps


def _well_conditioned(rng, n, batch=2):
    return rng.standard_normal((batch, n, n)) + 2 * n**0.5 * np.eye(n)


def test_cholesky(emu, rng):
    so, dtype = emu
    for n in SIZES:
        g = rng.standard_normal((3, n, n))
        spd = g @ np.swapaxes(g, -1, -2) + n * np.eye(n)
        spd[1] = -spd[1]  # the middle one is not positive definite
        for upper in (0, 1):
            a = np.ascontiguousarray(spd.astype(dtype))
            # the triangle not read is garbage
            if upper:
                a[:, np.tril_indices(n, -1)[0], np.tril_indices(n, -1)[1]] = 7e3
            else:
                a[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = 7e3
            out = np.full_like(a, np.nan)
            info = np.full(3, -1, np.int32)
            _run(so, 0, 3, int(rng.integers(1 << 30)), a=a, out=out, info=info, n=n, upper=upper)
            np.testing.assert_array_equal(info, [0, 1, 0])
            assert np.isnan(out[1]).all()
            ref = np.linalg.cholesky(spd[[0, 2]], upper=bool(upper))
            np.testing.assert_allclose(out[[0, 2]], ref, rtol=_tol(dtype, n), atol=_tol(dtype, n))
        # mode 1: -L^-T too, L the lower factor (the blocked Cholesky's panels), each
        # matrix read as the top-left block of a larger one (row stride n + 5)
        big = np.full((2, n + 3, n + 5), 7e3, dtype)
        big[:, :n, :n] = spd[[0, 2]]
        out, inv = np.full((2, n, n), np.nan, dtype), np.full((2, n, n), np.nan, dtype)
        info = np.full(2, -1, np.int32)
        _run(so, 0, 2, 11, a=big, out=out, out2=inv, info=info, n=n, mode=1, ld=n + 5,
             stride=(n + 3) * (n + 5))  # fmt: skip
        np.testing.assert_allclose(out, np.linalg.cholesky(spd[[0, 2]]), rtol=_tol(dtype, n),
                                   atol=_tol(dtype, n))  # fmt: skip
        np.testing.assert_array_equal(info, [0, 0])
        ref = -np.swapaxes(np.linalg.inv(np.linalg.cholesky(spd[[0, 2]])), -1, -2)
        np.testing.assert_allclose(inv, ref, rtol=_tol(dtype, n) * 10, atol=_tol(dtype, n) * 10)


def _spd(rng, count, n):
    g = rng.standard_normal((count, n, n))
    return g @ np.swapaxes(g, -1, -2) / n + np.eye(n)


@pytest.mark.parametrize("part", range(4))
def test_cholesky_every_n(emu, rng, part):
    """gk_chol_small for every n of 1..64 (the n <= 32 leaf at 8, 16 and 32 lanes, and 32 + 32
    past it), lower and upper, mode 0 and 1 on strided input (row stride ld > n, matrix stride
    larger than n ld); a matrix that stops being positive definite at a late column (the second
    block's for n > 32) and one not positive definite at all: info 1, L and -L^-T all NaN; the
    same bits for another thread order."""
    so, dtype = emu
    for n in range(1 + part, GK_MAX_N + 1, 4):
        spd = _spd(rng, 4, n)
        # matrix 1: the trailing diagonal element below the rank-1 part of the rest: L's last
        # pivot is negative (the failure found at column n - 1); matrix 2: -spd
        v = spd[1, -1, :-1]
        spd[1, -1, -1] = v @ np.linalg.solve(spd[1, :-1, :-1], v) - 0.5 if n > 1 else -1.0
        spd[2] = -spd[2]
        good = [0, 3]
        ld = n + 3
        for upper in (0, 1):
            for mode in (0, 1):
                big = np.full((4, n + 2, ld), 7e3, dtype)
                big[:, :n, :n] = spd
                # the triangle not read is garbage
                tri = np.tril_indices(n, -1) if upper else np.triu_indices(n, 1)
                big[:, tri[0], tri[1]] = np.nan
                out = np.full((4, n, n), np.nan, dtype)
                inv = np.full((4, n, n), 5.0, dtype)
                info = np.full(4, -1, np.int32)
                fields = dict(a=big, out=out, info=info, n=n, upper=upper, mode=mode, ld=ld,
                              stride=(n + 2) * ld)  # fmt: skip
                if mode:
                    fields["out2"] = inv
                # the planner's block: one warp up to 32 rows
                fields["threads"] = LANES if n <= LANES else THREADS
                _run(so, 0, 4, int(rng.integers(1 << 30)), **fields)
                np.testing.assert_array_equal(info, [0, 1, 1, 0], err_msg=f"n={n}")
                assert np.isnan(out[1:3]).all(), n
                ref = np.linalg.cholesky(spd[good], upper=bool(upper))
                tol = _tol(dtype, n)
                np.testing.assert_allclose(out[good], ref, rtol=tol, atol=tol, err_msg=f"n={n}")
                if not mode:
                    assert (inv == 5.0).all()
                    continue
                assert np.isnan(inv[1:3]).all(), n
                ref = -np.swapaxes(np.linalg.inv(np.linalg.cholesky(spd[good])), -1, -2)
                np.testing.assert_allclose(inv[good], ref, rtol=tol * 10, atol=tol * 10,
                                           err_msg=f"n={n}")  # fmt: skip
                assert (np.triu(inv[good].swapaxes(-1, -2), 1) == 0).all()  # -X^T: upper
                again, inv2 = np.full_like(out, np.nan), np.full_like(inv, np.nan)
                fields.update(out=again, out2=inv2, info=np.full(4, -1, np.int32))
                _run(so, 0, 4, int(rng.integers(1 << 30)), **fields)
                assert again.tobytes() == out.tobytes() and inv2.tobytes() == inv.tobytes()


def test_lu_solve_and_inverse(emu, rng):
    so, dtype = emu
    for n in SIZES:
        a64 = _well_conditioned(rng, n)
        a64[1] = np.linalg.qr(a64[1])[0] * rng.uniform(1, 2, n)  # pivoting does work here
        a = np.ascontiguousarray(a64.astype(dtype))
        for k in (1, 5, 2 * CONSTANTS["GK_LA_RHS"] + 3):
            b = rng.standard_normal((2, n, k)).astype(dtype)
            out = np.full((2, n, k), np.nan, dtype)
            info = np.full(2, -1, np.int32)
            _run(so, 1, 2, int(rng.integers(1 << 30)), a=a, b=b, out=out, info=info, n=n, k=k,
                 mode=MODES["solve"])  # fmt: skip
            np.testing.assert_array_equal(info, [0, 0])
            ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
            np.testing.assert_allclose(out, ref, rtol=_tol(dtype, n) * 10, atol=_tol(dtype, n) * 10)
        out = np.full((2, n, n), np.nan, dtype)
        info = np.full(2, -1, np.int32)
        _run(so, 1, 2, 5, a=a, out=out, info=info, n=n, k=n, mode=MODES["inv"])
        ref = np.linalg.inv(a.astype(np.float64))
        np.testing.assert_allclose(out, ref, rtol=_tol(dtype, n) * 10, atol=_tol(dtype, n) * 10)


def test_lu_singular_det_and_slogdet(emu, rng):
    so, dtype = emu
    for n in SIZES:
        # eigenvalues within 0.4 of 1: the determinant stays within float32's range
        a64 = np.eye(n) + rng.standard_normal((3, n, n)) * (0.3 / np.sqrt(n))
        a64[1, :, n // 2] = 0  # exactly singular: a zero column
        a = np.ascontiguousarray(a64.astype(dtype))
        out = np.full((3, n, n), np.nan, dtype)
        info = np.full(3, -1, np.int32)
        _run(so, 1, 3, 9, a=a, out=out, info=info, n=n, k=n, mode=MODES["inv"])
        np.testing.assert_array_equal(info, [0, 1, 0])
        det = np.full(3, np.nan, dtype)
        _run(so, 1, 3, 3, a=a, out=det, n=n, mode=MODES["det"])
        ref = np.linalg.det(a.astype(np.float64))
        np.testing.assert_allclose(det, ref, rtol=_tol(dtype, n) * 10)
        assert det[1] == 0
        sign, logabs = np.full(3, np.nan, dtype), np.full(3, np.nan, dtype)
        _run(so, 1, 3, 4, a=a, out=sign, out2=logabs, n=n, mode=MODES["slogdet"])
        rs, rl = np.linalg.slogdet(a.astype(np.float64))
        np.testing.assert_array_equal(sign, rs)
        assert logabs[1] == -np.inf
        np.testing.assert_allclose(
            logabs[[0, 2]], rl[[0, 2]], rtol=_tol(dtype, n), atol=_tol(dtype, n)
        )


def test_eigh_jacobi(emu, rng):
    so, dtype = emu
    for n in (1, 2, 3, 8, 17, CONSTANTS["GK_LA_JACOBI_N"]):
        q = np.linalg.qr(rng.standard_normal((2, n, n)))[0]
        lam = np.sort(rng.uniform(-2, 2, (2, n)), axis=-1)
        lam[1, : n // 2] = 0.5  # a repeated eigenvalue
        lam = np.sort(lam, axis=-1)
        sym = (q * lam[:, None, :]) @ np.swapaxes(q, -1, -2)
        sym = (sym + np.swapaxes(sym, -1, -2)) / 2
        for upper in (0, 1):
            a = np.ascontiguousarray(sym.astype(dtype))
            garbage = np.tril_indices(n, -1) if upper else np.triu_indices(n, 1)
            a[:, garbage[0], garbage[1]] = np.nan  # the triangle not read
            w = np.full((2, n), np.nan, dtype)
            v = np.full((2, n, n), np.nan, dtype)
            info = np.full(2, -1, np.int32)
            _run(so, 2, 2, int(rng.integers(1 << 30)), a=a, out=w, out2=v, info=info, n=n,
                 upper=upper, mode=1)  # fmt: skip
            np.testing.assert_array_equal(info, [0, 0])
            tol = _tol(dtype, n)
            np.testing.assert_allclose(w, lam, atol=tol * 2)
            av = sym @ v.astype(np.float64) - v * w[:, None, :]
            assert np.abs(av).max() < tol * 4, n
            vv = np.swapaxes(v, -1, -2).astype(np.float64) @ v - np.eye(n)
            assert np.abs(vv).max() < tol * 4, n


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_kernels_compile_without_local_memory(arch):
    """gk_chol_small keeps its rows (two 32-wide rows a lane for L11 and L21) in registers,
    float64 too."""
    emulation.compile_without_local_memory(
        arch, [kernels.linalg_small(dtype) for dtype in ("float32", "float64")]
    )
