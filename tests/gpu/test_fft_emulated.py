"""The FFT kernels (kernels/fft.cu, fft_aux.cu) run on the CPU through a host emulation of the
block (threads as fibers in a random order, barriers, shared memory first filled with NaN
bytes), launched by the plans that gpukit.runtime.cuda.fft builds (packed blocks, address slots,
scratch buffers) and checked against numpy.fft in float64: one-block lengths of every radix,
four-step passes (a short block limit forces them), Bluestein, real transforms of even and odd
length, strided and batched inputs, inverse and scaled transforms."""

import ctypes
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from gpukit.runtime import fft_plan
from gpukit.runtime.args import arg_struct
from gpukit.runtime.backend import Layout
from gpukit.runtime.cuda import fft as cuda_fft

sys.path.insert(0, str(Path(__file__).parent / "emulator"))
import emulation

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
SHARED = 227 * 1024  # an H100's shared memory per block
EPS = {np.dtype(np.complex64): 2.0**-23, np.dtype(np.complex128): 2.0**-52}


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fft_emulator")


def _build(aux: bool, defines: tuple, out_dir):
    """The emulated kernels of one instance, fft_aux.cu (aux) or fft.cu, as a call that runs
    one of them by name and raises if it fails."""
    so = emulation.build(emulation.HERE / "fft_driver.cpp", (f"GK_FFT_EMU_AUX={int(aux)}",
                         *defines), out_dir)  # fmt: skip
    emulation.check_layout(so, arg_struct("gk_fft_aux_args" if aux else "gk_fft_args"))
    return emulation.runner(so.gk_emu_run, ctypes.c_void_p, ctypes.c_char_p,
                            *[ctypes.c_uint] * 6)  # fmt: skip


class EmulatedCuda(emulation.EmulatedCuda):
    """What gpukit.runtime.cuda.fft asks of a CUDA backend, its launches running the emulated
    FFT kernels (and the plans' copies)."""

    def __init__(self, lib_dir, seed):
        super().__init__(lib_dir, seed, 2, SHARED)  # few SMs: the grid-stride loops go round

    def run_kernel(self, file, defines, name, grid, block, shared, args, nbytes):
        if file == "fft.cu" or file == "fft_aux.cu":
            run = _build(file == "fft_aux.cu", defines, self.lib_dir)
            run(args, name.encode(), *grid, block[0], shared, self.seed)
        elif file == "transpose.cu":  # dense copies of strided inputs: the kernel itself
            run = emulation.build_one(file, name, "gk_transpose_args", defines, self.lib_dir)
            run(args, *grid, block[0], shared, self.seed)
        else:
            emulation.host_elementwise(file, defines, name, args, nbytes)


def _poison(cuda, nbytes):
    """Pool blocks handed back next start as NaNs where nothing writes."""
    for _ in range(4):
        cuda.put(np.full(nbytes // 8 + 8, np.nan))


def _run(lib_dir, rng, dtype, kind, n, batch=(), inverse=False, scale=1.0, limit=None,
         strided=False):  # fmt: skip
    """Plans kind over a (batch..., length) input (strided: a transposed view of its memory)
    and checks it against numpy.fft; returns the kernels launched."""
    dtype = np.dtype(dtype)
    cx = dtype if dtype.kind == "c" else np.dtype(np.complex64 if dtype == np.float32 else "c16")
    length = n // 2 + 1 if kind == "c2r" else n
    shape = (*batch, length)
    stored_shape = shape[::-1] if strided else shape
    x = rng.standard_normal(stored_shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(stored_shape)
    x = x.astype(dtype)
    view = x.T if strided else x
    cuda = EmulatedCuda(lib_dir, int(rng.integers(1 << 31)))
    buf = cuda.put(x)
    src = Layout(dtype, view.shape, view.strides, 16)
    plan = cuda_fft.plan_fft(cuda, src, kind, n, inverse, scale, limit=limit)
    ref = view.astype(np.complex128)
    if kind == "c2c":
        want = np.fft.ifft(ref, axis=-1) * n if inverse else np.fft.fft(ref, axis=-1)
        out_shape, out_dtype = shape, cx
    elif kind == "r2c":
        want = np.fft.rfft(ref.real, axis=-1)
        out_shape, out_dtype = (*batch, n // 2 + 1), cx
    else:
        want = np.fft.irfft(ref, n=n, axis=-1) * n
        out_shape = (*batch, n)
        out_dtype = np.dtype(np.float32 if cx == np.complex64 else np.float64)
    want = want * scale
    _poison(cuda, int(np.prod(out_shape)) * out_dtype.itemsize)
    got = cuda.get(plan(0, None, buf, 0), out_shape, out_dtype)
    assert cuda.table.error is None, cuda.table.error
    assert not np.isnan(got).any()
    eps = EPS[cx]
    # Per row: the error of an FFT grows as eps * log2(n) * ||x|| (Parseval: ||X|| = sqrt(n) ||x||).
    norm = np.linalg.norm(ref.reshape(-1, ref.shape[-1]), axis=-1).max() * np.sqrt(n) * abs(scale)
    bound = 8 * eps * max(np.log2(max(n, 2)), 1) * norm
    assert np.abs(got - want).max() <= bound, (np.abs(got - want).max(), bound)
    # Norm-wise over the whole output, tighter: a twiddle off by one step in a few outputs stays
    # within the bound above (a row's norm, sqrt(n) times any one output) but not this one.
    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), np.finfo(np.float64).tiny)
    assert err <= 2 * eps * max(np.log2(max(n, 2)), 1), err
    return cuda.launched


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 11, 12, 13, 16, 30, 64, 105, 143, 256, 1000, 3125])
def test_one_block_lengths(lib_dir, rng, n):
    assert _run(lib_dir, rng, np.complex128, "c2c", n, batch=(3,)) == ["gk_fft_rows"]


def test_threads_taking_several_butterflies(lib_dir, rng):
    """6561 = 3^8: 2187 butterflies a pass, more than a block's threads."""
    assert _run(lib_dir, rng, np.complex64, "c2c", 6561, batch=(2,)) == ["gk_fft_rows"]


def test_complex64_inverse_scaled_batched(lib_dir, rng):
    _run(lib_dir, rng, np.complex64, "c2c", 60, batch=(2, 5), inverse=True, scale=1 / 60)
    _run(lib_dir, rng, np.complex64, "c2c", 4096, batch=(1,), scale=0.5)


def test_strided_rows(lib_dir, rng):
    """The transform axis strided (a transposed view): blocks copy columns."""
    _run(lib_dir, rng, np.complex128, "c2c", 24, batch=(9,), strided=True)
    _run(lib_dir, rng, np.complex64, "c2c", 5, batch=(4, 3), strided=True, inverse=True)


def test_four_step(lib_dir, rng):
    """Lengths past the block limit: columns, twiddles, rows; recursively for three passes."""
    launched = _run(lib_dir, rng, np.complex128, "c2c", 16 * 12, batch=(3,), limit=16)
    assert launched == ["gk_fft_rows"] * 2
    launched = _run(lib_dir, rng, np.complex64, "c2c", 8 * 8 * 6, batch=(2,), limit=8,
                    inverse=True, scale=0.25)  # fmt: skip
    assert launched == ["gk_fft_rows"] * 3
    _run(lib_dir, rng, np.complex128, "c2c", 4 * 9, batch=(5,), limit=9, strided=True)
    # the blocks of 2^25's first passes under the short split: 16 columns of 256 (twiddled), 16 rows
    launched = _run(lib_dir, rng, np.complex64, "c2c", 256 * 256, batch=(1,), limit=256)
    assert launched == ["gk_fft_rows"] * 2


def _record_launches(monkeypatch):
    """The fields of every gk_fft_rows launch the plans made after this build."""
    launches = []
    launch = cuda_fft.PlanBuilder.launch

    def record(self, fn, grid, block, struct, fields, **kw):
        if struct == "gk_fft_args":
            launches.append(dict(fields, grid=grid, block=block))
        return launch(self, fn, grid, block, struct, fields, **kw)

    monkeypatch.setattr(cuda_fft.PlanBuilder, "launch", record)
    return launches


@pytest.mark.parametrize("policy", fft_plan.SPLITS)
def test_split_policies(lib_dir, rng, monkeypatch, policy):
    """Both ways of splitting a long length (short SHORT_BYTES and LONG_ROW_BYTES bring the
    short split's three passes within the emulator's reach): 4096 as 16 x 16 x 16 or 64 x 64.
    The last of three passes writes rows strided by 256 whose block takes rows adjacent in the
    output."""
    monkeypatch.setattr(fft_plan, "SPLIT", policy)
    monkeypatch.setattr(fft_plan, "SHORT_BYTES", 128)
    monkeypatch.setattr(fft_plan, "LONG_ROW_BYTES", 256)
    launches = _record_launches(monkeypatch)
    want = 3 if policy == "short" else 2
    launched = _run(lib_dir, rng, np.complex64, "c2c", 4096, batch=(2,), limit=64)
    assert launched == ["gk_fft_rows"] * want
    last = launches[-1]
    assert last["out_step"] == (256 if policy == "short" else 64)
    assert last["out_batch"][0] == 1  # rows adjacent in the output along dimension 0
    assert len(launches) == want
    _run(lib_dir, rng, np.complex128, "c2c", 16 * 8 * 8, batch=(3,), limit=16, inverse=True,
         scale=1 / 3, strided=True)  # fmt: skip
    _run(lib_dir, rng, np.float32, "r2c", 2 * 4096, batch=(1,), limit=64)
    _run(lib_dir, rng, np.complex64, "c2r", 2 * 2048, batch=(2,), limit=64, scale=0.5)


def test_bluestein(lib_dir, rng):
    launched = _run(lib_dir, rng, np.complex128, "c2c", 17, batch=(3,))
    assert "gk_fft_chirp_pre" in launched and "gk_fft_chirp_post" in launched
    _run(lib_dir, rng, np.complex64, "c2c", 1009, batch=(2,), inverse=True)
    _run(lib_dir, rng, np.complex128, "c2c", 2 * 19, batch=(2,), strided=True)
    _run(lib_dir, rng, np.complex128, "c2c", 37, batch=(2,), limit=16)  # its FFTs in passes


@pytest.mark.parametrize("n", [1, 2, 6, 7, 16, 34, 45, 128])
def test_real_transforms(lib_dir, rng, n):
    _run(lib_dir, rng, np.float64, "r2c", n, batch=(3,))
    _run(lib_dir, rng, np.complex128, "c2r", n, batch=(3,), scale=1 / n)


def test_crops_and_dense_copies(lib_dir, rng):
    """Outputs cut from longer transforms (odd real input past a block, Bluestein), and inputs
    with more batch dimensions than the kernels index, copied dense first."""
    launched = _run(lib_dir, rng, np.float64, "r2c", 9 * 5, batch=(2,), limit=9)
    assert launched[-1] in ("gk_ew_strided", "gk_ew_contig")
    _run(lib_dir, rng, np.float32, "r2c", 23, batch=(3,))
    launched = _run(lib_dir, rng, np.complex128, "c2c", 6, batch=(2, 3, 2, 2, 2), strided=True)
    assert launched[0] in ("gk_ew_strided", "gk_ew_contig", "gk_transpose")


def test_real_paths(lib_dir, rng):
    """Even lengths run at half length (post- / pre-processing); odd or strided ones widen."""
    launched = _run(lib_dir, rng, np.float32, "r2c", 64, batch=(2,))
    assert launched == ["gk_fft_rows", "gk_fft_r2c_post"]
    launched = _run(lib_dir, rng, np.complex64, "c2r", 64, batch=(2,))
    assert launched == ["gk_fft_c2r_pre", "gk_fft_rows"]
    launched = _run(lib_dir, rng, np.float64, "r2c", 10, batch=(3,), strided=True)
    assert launched[0] == "gk_fft_expand_real"
    launched = _run(lib_dir, rng, np.complex128, "c2r", 9, batch=(2,), strided=True)
    assert launched == ["gk_fft_expand_herm", "gk_fft_rows", "gk_fft_real_part"]
    _run(lib_dir, rng, np.float64, "r2c", 3 * 32, batch=(2,), limit=8)


def _flows(lib_dir, dtype, n, batch, inverse=False, scale=1.0, limit=None):
    """{define: value} of each gk_fft_rows instance a plan of c2c over (batch..., n) asks for."""
    cuda = EmulatedCuda(lib_dir, 0)
    x = np.zeros((*batch, n), dtype)
    src = Layout(x.dtype, x.shape, x.strides, 16)
    cuda_fft.plan_fft(cuda, src, "c2c", n, inverse, scale, limit=limit)
    return [dict(d.split("=", 1) for d in defines) for file, defines, _ in cuda.functions
            if file == "fft.cu"]  # fmt: skip


def test_flows_compiled_in(lib_dir):
    """What the plan knows of each launch (fft_plan.Flow) reaches its instance's defines."""
    keys = ("DIRECT_IN", "DIRECT_OUT", "CONJ_IN", "CONJ_OUT", "SCALED", "TWIDDLED", "CROPPED",
            "NDIM")  # fmt: skip

    def flags(f):
        return tuple(int(f[f"GK_FFT_{k}"]) for k in keys)

    (one,) = _flows(lib_dir, np.complex64, 4096, (8,))
    assert flags(one) == (1, 1, 0, 0, 0, 0, 0, 1)
    (inv,) = _flows(lib_dir, np.complex64, 60, (2, 5), inverse=True, scale=1 / 60)
    assert flags(inv) == (1, 1, 1, 1, 1, 0, 0, 1)  # the batch dimensions merge
    columns, rows = _flows(lib_dir, np.complex128, 16 * 12, (3,), limit=16, inverse=True)
    assert flags(columns) == (0, 0, 1, 0, 0, 1, 0, 2)
    assert flags(rows) == (1, 0, 0, 1, 0, 0, 0, 2)
    with pytest.raises(ValueError, match="batch dimensions"):
        fft_plan.Flow(ndim=5)
    emitter = cuda_fft._Emitter(EmulatedCuda(lib_dir, 0), None, np.dtype(np.complex64), None)
    view = cuda_fft.View(0, 1, (16,))
    with pytest.raises(ValueError, match="cut to 17"):
        emitter.rows(16, (1,), view, view, False, False, 1.0, out_len=17)


def test_one_transform_takes_rows_adjacent_in_the_output(lib_dir, rng, monkeypatch):
    """One 1-D transform in two passes (64 x 64): the second pass's rows write 64 apart and its
    block takes rows adjacent in the output (the batch dimension of one row, stride 0, is not
    the nearest: taken as such, a block held one row and wrote 8 bytes 64 rows apart)."""
    launches = _record_launches(monkeypatch)
    assert _run(lib_dir, rng, np.complex64, "c2c", 4096, limit=64) == ["gk_fft_rows"] * 2
    last = launches[-1]
    assert last["out_step"] == 64 and last["out_batch"][0] == 1
    assert last["grid"] < last["rows"]  # several rows a block


def test_geometry():
    assert fft_plan.radices(4096) == (16, 16, 16)
    assert fft_plan.radices(1000) == (8, 5, 5, 5)
    assert fft_plan.radices(1) == (1,)
    assert fft_plan.split(1 << 24, 4096, policy="balanced") == (4096, 4096)
    assert fft_plan.split(1 << 25, 8192, policy="balanced") == (4096, 8192)
    # short: balanced while its rows are at most 16 KiB (2^22 complex64), else rows of at most
    # 8 KiB a pass, as few passes as that allows, balanced
    assert fft_plan.split(1 << 22, 8192, policy="short") == (2048, 2048)
    assert fft_plan.split(1 << 24, 8192, policy="short") == (256, 1 << 16)
    assert fft_plan.split(1 << 16, 8192, policy="short") == (256, 256)
    assert fft_plan.split(1 << 25, 8192, policy="short") == (256, 1 << 17)
    assert fft_plan.split(1 << 17, 8192, policy="short") == (256, 512)
    assert fft_plan.split(1 << 24, 4096, 16, policy="short") == (256, 1 << 16)
    assert fft_plan.split(1 << 20, 8192, policy="short") == (1024, 1024)  # two passes suffice
    assert fft_plan.passes(1 << 24, 8192, policy="short") == 3
    assert fft_plan.passes(1 << 25, 8192, policy="short") == 3
    assert fft_plan.passes(1 << 24, 8192, policy="balanced") == 2
    assert fft_plan.passes(13**7, 8192, policy="short") == 3
    with pytest.raises(ValueError, match="GK_FFT_SPLIT"):
        fft_plan.split(1 << 24, 8192, policy="square")
    assert fft_plan.bluestein_length(1009) == 2048
    assert not fft_plan.is_smooth(17 * 4) and fft_plan.is_smooth(3 * 5 * 7 * 11 * 13 * 64)
    blk = fft_plan.block(4096, 8, False, 100)
    assert (blk.tpr, blk.rows, blk.threads) == (256, 1, 256)
    assert fft_plan.table_length(4096) == 64 + 64 and fft_plan.table_length(6561) == 128 + 52
    assert blk.shared == fft_plan.pitch(4096) * 8 + fft_plan.ROW_EXTRA + 128 * 8
    blk = fft_plan.block(4096, 8, True, 4096)
    assert blk.rows == 4 and blk.shared <= fft_plan.COLUMNS_SHARED
    assert fft_plan.max_block_length(8) == 8192 and fft_plan.max_block_length(16) == 4096
    assert fft_plan.max_block_length(8, 99 * 1024) == 8192  # sm_86 / sm_89
    assert fft_plan.max_block_length(16, 48 * 1024) == 2048


@pytest.mark.parametrize("itemsize", [8, 16])
def test_every_block_fits_a_launch(itemsize):
    """Every smooth length one block takes gets at most 1024 threads (a thread takes several
    butterflies of a pass where a row has more than its radices' thread limit)."""
    for n in range(1, fft_plan.max_block_length(itemsize) + 1):
        if not fft_plan.is_smooth(n):
            continue
        for columns, batch in ((False, 1), (False, 1000), (True, 1000)):
            blk = fft_plan.block(n, itemsize, columns, batch)
            assert blk.tpr <= fft_plan.max_threads(blk.radices, itemsize), (n, columns)
            assert blk.rows * blk.tpr <= blk.threads <= 1024, (n, columns, blk)
            assert blk.shared <= 227 * 1024, (n, columns, blk)
