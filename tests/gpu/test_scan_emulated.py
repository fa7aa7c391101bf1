"""kernels/scan.cu's gk_scan_tiles run on the CPU through the host emulation of the block (threads
as fibers in a random order, barriers, shared memory first filled with NaN bytes), launched by the
plans that gpukit.runtime.cuda.reduce builds (the flags' zero fill first, packed blocks, address
slots, the state scratch) and checked against NumPy: rows shorter than a tile, tails, several
windows of tiles (the window prefixes of the look-back), several rows, strided and unaligned
inputs, 4- and 8-byte accumulators, and the same bits whatever the thread order. (Blocks run one
after the other here, in ticket order: the look-back's waits find what they wait for published.)"""

import ctypes
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from gpukit.errors import DeviceError
from gpukit.runtime.args import CONSTANTS, arg_struct
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda import reduce as cuda_reduce

sys.path.insert(0, str(Path(__file__).parent / "emulator"))
import emulation

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
TILE = CONSTANTS["GK_SCAN_THREADS"] * CONSTANTS["GK_SCAN_ITEMS"]


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("scan_emulator")


class EmulatedCuda(emulation.EmulatedCuda):
    """What gpukit.runtime.cuda.reduce's cumsum asks of a CUDA backend: gk_scan_tiles emulated,
    the zero fill of its flags done on the host."""

    def __init__(self, lib_dir, seed, sm_count):
        super().__init__(lib_dir, seed, sm_count, 227 * 1024)

    def blocks_for(self, threads, block):
        return min(-(-max(threads, 1) // block), self.sm_count * 32)

    def run_kernel(self, file, defines, name, grid, block, shared, args, nbytes):
        if file == "scan.cu":
            run = emulation.build_one(file, name, "gk_scan_args", defines, self.lib_dir)
            run(args, *grid, block[0], shared, self.seed)
            return
        assert file == "elementwise.cu" and name == "gk_ew_contig", (file, name)
        assert "GK_OP=identity" in defines and "GK_SCALAR0=1" in defines, defines
        s = arg_struct("gk_ew_contig_args")
        blob = ctypes.string_at(args, nbytes)
        (n,) = struct.unpack_from(f"<{s.fields['n'][0]}", blob, s.fields["n"][1])
        (dst,) = struct.unpack_from(f"<{s.fields['ptr'][0]}", blob, s.fields["ptr"][1])
        ctypes.memset(dst, 0, n)  # the fill zeroes bytes (uint8)


def _cumsum(lib_dir, seed, base, view, axis, out_dtype, sm_count=2):
    """cumsum(view, axis) by the plan, where view is a view of base's memory; returns (result,
    kernels launched)."""
    cuda = EmulatedCuda(lib_dir, seed, sm_count)
    buf = cuda.put(base)
    off = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    align = 16 if off % 16 == 0 else off & -off
    out = Layout(np.dtype(out_dtype), view.shape, None)
    plan = cuda_reduce.plan_cumsum(cuda, Layout(view.dtype, view.shape, view.strides, align),
                                   axis, out)  # fmt: skip
    for _ in range(4):  # pool blocks handed back next start as poison where nothing writes
        cuda.put(np.full(view.size * out.dtype.itemsize // 8 + 8, np.nan))
    try:
        result = plan(0, None, buf, off)
    except DeviceError:
        raise AssertionError(str(cuda.table.error)) from None
    got = cuda.get(result, view.shape, out.dtype)
    return got, cuda.launched


def _check(lib_dir, rng, dtype, out_dtype, shape, axis=-1, view=lambda a: a, sm_count=2):
    dtype = np.dtype(dtype)
    base = rng.standard_normal(shape) * 4
    base = base.astype(dtype) if dtype.kind == "f" else np.round(base).astype(dtype)
    v = view(base)
    axis = axis % v.ndim
    seed = int(rng.integers(1 << 31))
    got, launched = _cumsum(lib_dir, seed, base, v, axis, out_dtype, sm_count)
    assert launched[-1] == "gk_scan_tiles", launched
    want = np.cumsum(v.astype(np.float64 if dtype.kind == "f" else out_dtype), axis=axis)
    if np.dtype(out_dtype).kind == "f":
        n = v.shape[axis]
        scale = np.cumsum(np.abs(v.astype(np.float64)), axis=axis) + 1
        eps = np.finfo(out_dtype).eps
        assert (np.abs(got - want) <= 4 * eps * scale * max(np.log2(n + 1), 1)).all()
    else:
        assert np.array_equal(got, want)
    again, _ = _cumsum(lib_dir, seed + 1, base, v, axis, out_dtype, sm_count + 1)
    assert again.tobytes() == got.tobytes(), "the bits depend on the thread order"
    return got


@pytest.mark.parametrize("n", [1, 31, 1025, TILE + 5])
def test_short_rows_and_tails(lib_dir, rng, n):
    _check(lib_dir, rng, np.float32, np.float32, (n,))


def test_several_windows(lib_dir, rng):
    """More tiles than GK_SCAN_WINDOW: later windows fold the earlier windows' sums."""
    _check(lib_dir, rng, np.float32, np.float32, (CONSTANTS["GK_SCAN_WINDOW"] * TILE + 3 * TILE,))


def test_rows_strided_and_unaligned(lib_dir, rng):
    _check(lib_dir, rng, np.float32, np.float32, (3, 2 * TILE + 7))
    _check(lib_dir, rng, np.float32, np.float32, (3, 2 * TILE), view=lambda a: a[:, 1:])
    _check(lib_dir, rng, np.float32, np.float32, (2, 3 * TILE), view=lambda a: a[:, ::3])
    _check(lib_dir, rng, np.float32, np.float32, (TILE + 9, 3), axis=0)  # few rows: tiles


def test_other_types(lib_dir, rng):
    _check(lib_dir, rng, np.float16, np.float16, (2, TILE + 100))
    _check(lib_dir, rng, np.int32, np.int64, (2 * TILE + 1,))
    _check(lib_dir, rng, np.float64, np.float64, (2, TILE + 100))
