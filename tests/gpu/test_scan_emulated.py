"""kernels/scan.cu's gk_scan_tiles run on the CPU through the host emulation of the block (threads
as fibers in a random order, barriers, shared memory first filled with NaN bytes), launched by the
plans that gpukit.runtime.cuda.reduce builds (the flags' zero fill first, packed blocks, address
slots, the state scratch, the dynamic shared memory) and checked against NumPy: rows shorter than
a tile, tails, several tiles and rows, strided and unaligned inputs, 4- and 8-byte accumulators,
and the same bits whatever the thread order. Blocks run one after the other here, in ticket
order, so a tile always finds its predecessor's prefix published: the look-back over windows of
tiles that published only their sums runs on states a test sets up (the carry must be the left
fold from the nearest prefix, to the bit)."""

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
from gpukit.runtime.cuda.reduce_geometry import scan_tile

sys.path.insert(0, str(Path(__file__).parent / "emulator"))
import emulation

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
TILE = scan_tile(4)  # float32 elements of a tile


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("scan_emulator")


class EmulatedCuda(emulation.EmulatedCuda):
    """What gpukit.runtime.cuda.reduce's cumsum asks of a CUDA backend: gk_scan_tiles emulated,
    the zero fill of its flags done on the host."""

    def __init__(self, lib_dir, seed, sm_count):
        super().__init__(lib_dir, seed, sm_count, 227 * 1024)

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


def test_several_tiles(lib_dir, rng):
    _check(lib_dir, rng, np.float32, np.float32, (5 * TILE + 3,))


@pytest.mark.parametrize(
    "dtype, out_dtype",
    [
        (np.float32, np.float32),
        (np.float64, np.float64),
        (np.int32, np.int64),
        (np.float16, np.float16),
    ],
)
def test_sums_published_ahead_change_no_bits(lib_dir, rng, dtype, out_dtype):
    """On one SM (a wave of 4 tiles) the 9 tiles' sums are published GK_SCAN_LEAD tickets ahead
    of their scans; on 8 SMs each tile publishes its own: the same bits."""
    n = 9 * scan_tile(np.dtype(dtype).itemsize) - 5
    base = rng.standard_normal(n) * 4
    base = base.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(base).astype(dtype)
    ahead, launched = _cumsum(lib_dir, int(rng.integers(1 << 31)), base, base, 0, out_dtype, 1)
    own, _ = _cumsum(lib_dir, int(rng.integers(1 << 31)), base, base, 0, out_dtype, 8)
    assert launched == ["gk_ew_contig", "gk_scan_tiles"]
    if np.dtype(out_dtype).kind == "f":
        want = np.cumsum(base.astype(np.float64))
        scale = np.cumsum(np.abs(base.astype(np.float64))) + 1
        assert (np.abs(ahead - want) <= 4 * np.finfo(out_dtype).eps * scale * np.log2(n)).all()
    else:
        assert np.array_equal(ahead, np.cumsum(base, dtype=out_dtype))
    assert ahead.tobytes() == own.tobytes()


def _one_row(lib_dir, x, tiles, lead, blocks, seed):
    """Runs `blocks` tickets of gk_scan_tiles over the row x of `tiles` tiles with the given lead,
    from cleared states. Returns (output, each tile's flag, each tile's published value)."""
    dtype = x.dtype
    run = emulation.build_one(
        "scan.cu", "gk_scan_tiles", "gk_scan_args", cuda_reduce.kernels.cumsum(dtype, dtype)[1],
        lib_dir,
    )  # fmt: skip
    out = np.full_like(x, np.nan)
    ticket = np.zeros(2, np.uint64)
    flags = np.zeros(tiles, np.uint64 if dtype.itemsize == 4 else np.int32)
    sums, prefs = np.full(tiles, np.nan, dtype), np.full(tiles, np.nan, dtype)
    s = arg_struct("gk_scan_args")
    fields = dict.fromkeys(s.fields, 0)
    for k, v in (("in", x), ("out", out), ("ticket", ticket), ("flags", flags), ("sums", sums),
                 ("prefs", prefs)):  # fmt: skip
        fields[k] = v.ctypes.data
    fields.update(n_rows=1, n=x.size, in_step=1, out_step=1, tiles_per_row=tiles, lead=lead,
                  row_ndim=1, row_shape=[1], in_row_stride=[0], out_row_stride=[0])  # fmt: skip
    blob = ctypes.create_string_buffer(bytes(s.pack(**fields)), s.size)
    shared = scan_tile(dtype.itemsize) * dtype.itemsize
    run(blob, blocks, 1, 1, CONSTANTS["GK_SCAN_THREADS"], shared, seed)
    if dtype.itemsize == 4:  # flag << 32 | value bits in one word
        flag = (flags >> np.uint64(32)).astype(int)
        value = (flags & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(dtype)
    else:
        flag = flags.astype(int)
        value = np.where(flag == 2, prefs, sums)
    return out, flag, value


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sum_published_ahead_is_the_scans_own(lib_dir, rng, dtype):
    """Three tickets that only publish sums ahead (lead 8: no scans) publish, for each of three
    tiles, the bits that the scan of that tile alone publishes as its inclusive prefix (0 + its
    sum): the first tile's as its prefix, the others' as sums."""
    tile = scan_tile(np.dtype(dtype).itemsize)
    x = (rng.standard_normal(3 * tile - 7) * 4).astype(dtype)
    seed = int(rng.integers(1 << 31))
    out, flag, value = _one_row(lib_dir, x, 3, 8, 3, seed)
    assert list(flag) == [2, 1, 1] and np.isnan(out).all()
    for k in range(3):
        _, alone_flag, alone = _one_row(lib_dir, x[k * tile : (k + 1) * tile].copy(), 1, 0, 1,
                                        seed + k + 1)  # fmt: skip
        assert alone_flag[0] == 2 and alone[0].tobytes() == value[k].tobytes(), k


def _tile_after_states(lib_dir, tile_x, states, prefix_at, seed):
    """Runs the one block that takes tile q = len(states) (input tile_x) of a row whose earlier
    tiles' states are set up: `states[k]` the value tile k published, as its prefix for
    k <= prefix_at and as its sum after. Returns (the tile's output, the flag and value it
    published)."""
    dtype = tile_x.dtype
    tile, q = tile_x.size, len(states)
    assert tile == scan_tile(dtype.itemsize)
    defines = cuda_reduce.kernels.cumsum(dtype, dtype)[1]
    run = emulation.build_one("scan.cu", "gk_scan_tiles", "gk_scan_args", defines, lib_dir)
    x = np.full((q + 1) * tile, np.nan, dtype)  # only the last tile is to be read
    x[q * tile :] = tile_x
    out = np.full_like(x, np.nan)
    ticket = np.array([q, 0], np.uint64)
    flag = np.where(np.arange(q + 1) <= prefix_at, 2, 1).astype(np.uint64)
    flag[q] = 0
    values = np.append(states, 0).astype(dtype)
    if dtype.itemsize == 4:  # flag << 32 | value bits in one word
        flags = (flag << np.uint64(32)) | values.view(np.uint32).astype(np.uint64)
        sums = prefs = np.zeros(1, dtype)
    else:
        flags = flag.astype(np.int32)
        prefs = np.where(flag == 2, values, np.nan).astype(dtype)
        sums = np.where(flag == 1, values, np.nan).astype(dtype)
    s = arg_struct("gk_scan_args")
    fields = dict.fromkeys(s.fields, 0)
    addr = {
        k: v.ctypes.data
        for k, v in (
            ("in", x),
            ("out", out),
            ("ticket", ticket),
            ("flags", flags),
            ("sums", sums),
            ("prefs", prefs),
        )
    }
    fields.update(addr, n_rows=1, n=x.size, in_step=1, out_step=1, tiles_per_row=q + 1,
                  row_ndim=1, row_shape=[1], in_row_stride=[0], out_row_stride=[0])  # fmt: skip
    blob = ctypes.create_string_buffer(bytes(s.pack(**fields)), s.size)
    run(blob, 1, 1, 1, CONSTANTS["GK_SCAN_THREADS"], tile * dtype.itemsize, seed)
    if dtype.itemsize == 4:
        published = (int(flags[q]) >> 32, np.uint32(flags[q] & 0xFFFFFFFF).view(dtype))
    else:
        published = (int(flags[q]), prefs[q])
    return out[q * tile :], published


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("prefix_at", [99, 93, 60, 29])
def test_lookback_folds_from_the_nearest_prefix(lib_dir, rng, dtype, prefix_at):
    """Tile 100 after tiles that published only their sums back to `prefix_at` (in the nearest
    window of GK_LANES tiles, at its first lane and a later one; one and two windows further,
    past windows the look-back keeps): the carry is the left fold prefix(prefix_at) +
    sum(prefix_at + 1) + ... + sum(99), bit for bit; the tiles before prefix_at (prefixes of
    1e30) are never used."""
    dtype = np.dtype(dtype)
    states = rng.standard_normal(100).astype(dtype) * 100
    states[:prefix_at] = 1e30
    carry = states[prefix_at]
    for v in states[prefix_at + 1 :]:
        carry = dtype.type(carry + v)
    seed = int(rng.integers(1 << 31))
    x = rng.standard_normal(scan_tile(dtype.itemsize)).astype(dtype)
    got, (flag, value) = _tile_after_states(lib_dir, x, states, prefix_at, seed)
    assert got[0] == dtype.type(carry + x[0])
    want = carry + np.cumsum(x.astype(np.float64))
    scale = np.abs(carry) + np.cumsum(np.abs(x.astype(np.float64)))
    assert (np.abs(got - want) <= 16 * np.finfo(dtype).eps * scale).all()
    assert flag == 2 and abs(value - want[-1]) <= 16 * np.finfo(dtype).eps * scale[-1]
    again, _ = _tile_after_states(lib_dir, x, states, prefix_at, seed + 1)
    assert again.tobytes() == got.tobytes(), "the bits depend on the thread order"


def test_rows_strided_and_unaligned(lib_dir, rng):
    _check(lib_dir, rng, np.float32, np.float32, (3, 2 * TILE + 7))
    _check(lib_dir, rng, np.float32, np.float32, (3, 2 * TILE), view=lambda a: a[:, 1:])
    _check(lib_dir, rng, np.float32, np.float32, (2, 3 * TILE), view=lambda a: a[:, ::3])
    _check(lib_dir, rng, np.float32, np.float32, (TILE + 9, 3), axis=0)  # few rows: tiles


def test_other_types(lib_dir, rng):
    _check(lib_dir, rng, np.float16, np.float16, (2, TILE + 100))
    _check(lib_dir, rng, np.int32, np.int64, (2 * TILE + 1,))
    _check(lib_dir, rng, np.float64, np.float64, (2, TILE + 100))
