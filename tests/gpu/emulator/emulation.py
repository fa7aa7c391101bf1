"""What every host-emulated kernel test shares: the NVRTC build of kernels checked for local
memory, building a kernel of kernels/ with g++ over gk_emulate.h into a ctypes library, checking
that library's argument layout against the block gpukit packs, reading a launch's result, and a
launch table through which gpukit._core's plans launch into the emulated kernels, and the CUDA
backend such plans are built for."""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gpukit import _native, jit
from gpukit.errors import BackendUnavailableError
from gpukit.runtime import kernels, open_backend
from gpukit.runtime.args import CONSTANTS, arg_struct

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parents[2] / "kernels"


def compile_without_local_memory(arch: str, instances) -> None:
    """Builds each (file, defines) of `instances` with NVRTC for `arch` and checks that its
    kernels are in the image and, where pip's cuobjdump is installed, that their SASS has no
    local memory (LDL / STL); skips without NVRTC, and after building without cuobjdump."""
    try:
        nvrtc = jit.open_compiler("nvrtc")[0]
    except BackendUnavailableError as e:
        pytest.skip(str(e))
    j = jit.Jit(nvrtc, [f"--gpu-architecture={arch}"])
    tools = [p for root in sys.path for p in glob.glob(f"{root}/nvidia/*/bin/cuobjdump")]
    for file, defines in instances:
        image = j.build_builtin(file, defines)
        for name in kernels.kernels_of(file, defines):
            assert name.encode() in image, name
        if not tools:
            continue
        env = {**os.environ, "PATH": os.path.dirname(tools[0]) + os.pathsep + os.environ["PATH"]}
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(image)
            f.flush()
            sass = subprocess.run([tools[0], "-sass", f.name], capture_output=True, text=True,
                                  env=env, check=True).stdout  # fmt: skip
        assert " LDL" not in sass and " STL" not in sass, f"local memory in {file} {defines}"
    if not tools:
        pytest.skip("no cuobjdump: compiled, SASS not inspected")


def compiler() -> str | None:
    """The host C++ compiler ($CXX or g++), None when there is none."""
    return shutil.which(os.environ.get("CXX", "g++"))


def build(source: Path, defines, out_dir: Path, *, portable: bool = False) -> ctypes.CDLL:
    """source (a driver here, or a generated one) compiled with gk_emulate.h force-included and
    `defines` (-D...); `portable` builds the kernels on compat.cuh's portable path (GK_HIP)
    rather than with the emulated warp helpers (GK_EMULATE). Built once per source and defines."""
    source = Path(source)
    mode = "-DGK_HIP" if portable else "-DGK_EMULATE"
    key = hashlib.sha1(repr((source.read_text(), mode, tuple(defines))).encode()).hexdigest()
    lib = Path(out_dir) / f"{source.stem}_{key[:16]}.so"
    if not lib.exists():
        cmd = [
            compiler() or "g++", "-O1", "-std=c++17", "-shared", "-fPIC", mode,
            *(f"-D{d}" for d in defines), "-include", str(HERE / "gk_emulate.h"),
            f"-I{KERNELS}", f"-I{HERE}", str(source), "-o", str(lib),
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-4000:]
    so = ctypes.CDLL(str(lib))
    so.gk_emu_expf.restype = ctypes.c_float
    so.gk_emu_expf.argtypes = (ctypes.c_float,)
    return so


def build_one(file: str, kernel: str, args: str, defines, out_dir: Path):
    """Kernel `kernel` of kernels/`file` (argument struct `args`), built on compat.cuh's portable
    path, as a call (args address, grid x, y, z, threads, shared bytes, seed) that raises if the
    kernel fails. The library is its `.library`; its `.cooperative`, the same call launching
    cooperatively (every block's threads run together: grid barriers)."""
    ours = (f"GK_EMU_SOURCE={file}", f"GK_EMU_KERNEL={kernel}", f"GK_EMU_ARGS={args}")
    so = build(HERE / "kernel_driver.cpp", (*ours, *defines), out_dir, portable=True)
    run = runner(so.gk_emu_run, ctypes.c_void_p, *[ctypes.c_uint] * 6)
    run.cooperative = runner(so.gk_emu_run_grid, ctypes.c_void_p, *[ctypes.c_uint] * 6)
    run.library = so
    return run


def check_layout(so: ctypes.CDLL, args) -> None:
    """The host build's argument struct is the block gpukit packs (`args`: an arg_struct, the
    layout _native read from kernels/args.cuh): same size, every field at the same offset."""
    so.gk_emu_field_offset.restype = ctypes.c_long
    so.gk_emu_field_offset.argtypes = (ctypes.c_char_p,)
    assert so.gk_emu_args_size() == args.size
    for field, (_, offset, _) in args.fields.items():
        assert so.gk_emu_field_offset(field.encode()) == offset, field


def runner(function, *argtypes):
    """`function` (returning null or what went wrong) as a call that raises on failure."""
    function.restype = ctypes.c_char_p
    function.argtypes = argtypes

    def call(*args):
        error = function(*args)
        if error is not None:
            raise RuntimeError(f"emulated kernel failed: {error.decode()}")

    return call


# gk_launch_table (native/include/gpukit/launch_table.h): how gpukit._core's plans launch.
_LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint32),
    ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p,
    ctypes.c_uint64,
)  # fmt: skip
_ENCODE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64
)
_ERROR_NAME = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)


class _RawTable(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("ctx", ctypes.c_void_p),
        ("launch", _LAUNCH),
        ("encode_tensor_map", _ENCODE),
        ("error_name", _ERROR_NAME),
    ]


_CAPSULE_NAME = b"gpukit.launch_table"
_FAILED = ctypes.create_string_buffer(b"GK_EMULATOR_LAUNCH_FAILED")


class LaunchTable:
    """A launch table whose launches call launch(function, grid, block, shared, args address,
    args bytes) in Python; a raised exception fails the launch (kept in `.error`)."""

    def __init__(self, launch):
        self.error = None

        def on_launch(ctx, function, grid, block, shared, stream, args, nbytes):
            try:
                launch(function, tuple(grid[:3]), tuple(block[:3]), shared, args, nbytes)
                return 0
            except Exception as e:  # reported through the plan's error, kept for the test
                self.error = e
                return 1

        self._callbacks = (
            _LAUNCH(on_launch),
            _ENCODE(lambda *_: 1),
            _ERROR_NAME(lambda *_: ctypes.addressof(_FAILED)),
        )
        self._raw = _RawTable(1, None, *self._callbacks)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
        self.capsule = new(ctypes.addressof(self._raw), _CAPSULE_NAME, None)


CLUSTER_KERNELS = {"gk_lu_panel_regs", "gk_lu_panel_cluster", "gk_qr_panel_cluster"}


class EmulatedCuda(ABC):
    """What a CUDA planner of gpukit.runtime.cuda asks of a CUDA backend (an sm_90 GPU with
    sm_count SMs and `shared` bytes of shared memory per block), over the CPU backend's memory:
    the plans it builds are real gpukit._core.Plans whose launches (blocks packed and addresses
    patched by the plan) go to run_kernel, which a test defines."""

    cooperative_launch = True  # plans' cooperative launches run every block together

    def __init__(self, lib_dir, seed, sm_count, shared):
        self.cpu = open_backend("cpu")
        self.pool = self.cpu.pool
        self.device = SimpleNamespace(
            compute_capability=(9, 0),
            max_shared_per_block_optin=shared,
            max_active_clusters=lambda fn, cluster, threads, shared=0: 1,
        )
        self.sm_count = sm_count
        self.sm90a = False  # the emulator runs no wgmma or TMA: the sm_90a kernels are not offered
        self.functions, self.shared_allowed, self.launched = [], {}, []
        self.lib_dir, self.seed = lib_dir, seed
        self.table = LaunchTable(self._launch)
        self.launch_table = self.table.capsule

    def function(self, file, defines, name):
        """An even handle (bit 0 is the launch table's cooperative flag)."""
        self.functions.append((file, defines, name))
        return 2 * len(self.functions)

    def allow_shared(self, fn, nbytes):
        self.shared_allowed[fn] = nbytes

    def blocks_for(self, threads, block):
        """As CudaBackend's: one block per `block` threads, at most 32 per SM."""
        return min(-(-max(threads, 1) // block), self.sm_count * 32)

    def cooperative_blocks(self, fn, threads, shared=0):
        """A cooperative launch's most blocks: as if 4 fit on each SM."""
        self.allow_shared(fn, shared)
        return 4 * self.sm_count

    @abstractmethod
    def run_kernel(self, file, defines, name, grid, block, shared, args, nbytes):
        """Runs kernel `name` of kernels/`file` built with `defines` (args: the packed block's
        address, nbytes long); raises if it cannot. A cooperative launch passes
        cooperative=True as well."""

    def put(self, x):
        """A buffer of the CPU backend's memory holding a copy of x (at least one byte)."""
        buf = self.pool.allocate(max(x.nbytes, 1), 0)
        if x.nbytes:
            self.cpu.upload(np.ascontiguousarray(x), buf, 0)
        return buf

    def get(self, buf, shape, dtype):
        host = np.empty(shape, dtype)
        self.cpu.download(host, buf, 0)
        return host

    def _launch(self, fn, grid, block, shared, args, nbytes):
        cooperative = bool(fn & _native.LAUNCH_COOPERATIVE)
        fn &= ~_native.LAUNCH_COOPERATIVE
        file, defines, name = self.functions[fn // 2 - 1]
        # a kernel of compile-time cluster dimensions (its launches' grid.x: one cluster) runs
        # as a cooperative launch: its cluster barrier a grid barrier, its blocks' shared memory
        # at hand (gk_emu_cluster_smem)
        cooperative |= name in CLUSTER_KERNELS
        assert shared <= 48 * 1024 or self.shared_allowed.get(fn, 0) >= shared
        if cooperative:
            self.run_kernel(
                file, defines, name, grid, block, shared, args, nbytes, cooperative=True
            )
        else:
            self.run_kernel(file, defines, name, grid, block, shared, args, nbytes)
        self.launched.append(name)


# emit_copy moves bits by width (complex64 as 8-byte words); complex128 as itself
_COPY_BYTES = {"GK_OUT_T=gk_u32": 4, "GK_OUT_T=gk_u64": 8, "GK_OUT_T=gk_c64": 8,
               "GK_OUT_T=gk_c128": 16}  # fmt: skip


def host_copy(file, defines, name, args, nbytes):
    """The plans' elementwise copies (crops, dense copies) done on the host from their packed
    block, element by element as kernels/elementwise.cu's identity op does within one dtype."""
    assert file == "elementwise.cu" and "GK_OP=identity" in defines, (file, defines)
    item = next(_COPY_BYTES[d] for d in defines if d in _COPY_BYTES)
    blob = ctypes.string_at(args, nbytes)

    def field(s, name, count=1):
        fmt, offset, _ = s.fields[name]
        return struct.unpack_from(f"<{count}{fmt}", blob, offset)

    if name == "gk_ew_contig":
        s = arg_struct("gk_ew_contig_args")
        (n,), (dst, src, _) = field(s, "n"), field(s, "ptr", 3)
        ctypes.memmove(dst, src, n * item)
        return
    s = arg_struct("gk_ew_args")
    (n,), (ndim,) = field(s, "n"), field(s, "ndim")
    dims = CONSTANTS["GK_MAX_DIMS"]
    shape = field(s, "shape", dims)[:ndim]
    strides = field(s, "stride", CONSTANTS["GK_MAX_OPERANDS"] * dims)
    out_st, in_st = strides[:ndim], strides[dims : dims + ndim]
    dst, src = field(s, "ptr", CONSTANTS["GK_MAX_OPERANDS"])[:2]
    for i in range(n):
        rem, o, q = i, 0, 0
        for d in range(ndim - 1, -1, -1):
            idx = rem % shape[d]
            rem //= shape[d]
            o += idx * out_st[d]
            q += idx * in_st[d]
        ctypes.memmove(dst + o * item, src + q * item, item)
