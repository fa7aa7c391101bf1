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
_FORK = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
)
_JOIN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)


class _RawTable(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("ctx", ctypes.c_void_p),
        ("launch", _LAUNCH),
        ("encode_tensor_map", _ENCODE),
        ("error_name", _ERROR_NAME),
        ("fork", _FORK),
        ("join", _JOIN),
    ]


_CAPSULE_NAME = b"gpukit.launch_table"
_FAILED = ctypes.create_string_buffer(b"GK_EMULATOR_LAUNCH_FAILED")


class LaunchTable:
    """A launch table whose launches call launch(function, grid, block, shared, args address,
    args bytes) in Python; a raised exception fails the launch (kept in `.error`). Launches run
    one by one as they come: a plan's second lane is its stream itself."""

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
            _FORK(_own_lane),
            _JOIN(lambda *_: 0),
        )
        self._raw = _RawTable(2, None, *self._callbacks)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
        self.capsule = new(ctypes.addressof(self._raw), _CAPSULE_NAME, None)


def _own_lane(ctx, stream, side) -> int:
    side[0] = stream
    return 0


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


# The element types of the plans' elementwise launches the host runs: emit_copy moves bits by
# width (complex64 as 8-byte words), complex128 as itself.
_HOST_TYPES = {"float": np.float32, "double": np.float64, "gk_u32": np.uint32,
               "gk_u64": np.uint64, "gk_c64": np.uint64, "gk_c128": np.complex128}  # fmt: skip
_HOST_OPS = {"identity": lambda x: x, "negative": np.negative}


def _host_view(pointer, dtype, shape, element_strides):
    """A strided view of host memory whose element 0 is at `pointer` (strides in elements)."""
    item = np.dtype(dtype).itemsize
    lo = sum((d - 1) * s for d, s in zip(shape, element_strides, strict=True) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, element_strides, strict=True) if s > 0)
    raw = (ctypes.c_char * ((hi - lo + 1) * item)).from_address(pointer + lo * item)
    flat = np.frombuffer(raw, dtype)[-lo:]
    byte_strides = tuple(s * item for s in element_strides)
    return np.lib.stride_tricks.as_strided(flat, shape, byte_strides, writeable=True)


def host_elementwise(file, defines, name, args, nbytes):
    """The plans' elementwise copies, fills and negations (kernels/elementwise.cu's identity and
    negative ops within one dtype, one operand) done on the host from their packed block."""
    d = dict(x.split("=", 1) for x in defines)
    assert file == "elementwise.cu" and d["GK_NIN"] == "1", (file, defines)
    op, dtype = _HOST_OPS[d["GK_OP"]], _HOST_TYPES[d["GK_OUT_T"]]
    blob = ctypes.string_at(args, nbytes)
    s = arg_struct("gk_ew_contig_args" if name == "gk_ew_contig" else "gk_ew_args")

    def field(name, count=1):
        fmt, offset, _ = s.fields[name]
        return struct.unpack_from(f"<{count}{fmt}", blob, offset)

    slots = 3 if name == "gk_ew_contig" else CONSTANTS["GK_MAX_OPERANDS"]
    dst, src = field("ptr", slots)[:2]
    if name == "gk_ew_contig":
        shape, out_st, in_st = field("n"), (1,), (1,)
    else:
        (ndim,), dims = field("ndim"), CONSTANTS["GK_MAX_DIMS"]
        shape = field("shape", dims)[:ndim]
        strides = field("stride", slots * dims)
        out_st, in_st = strides[:ndim], strides[dims : dims + ndim]
    out = _host_view(dst, dtype, shape, out_st)
    if d["GK_SCALAR0"] == "1":
        value = field("scalar_f" if np.dtype(dtype).kind == "f" else "scalar_i", slots)[1]
        out[...] = op(np.asarray(value, dtype))
    else:
        out[...] = op(_host_view(src, dtype, shape, in_st))


GEMM_KERNELS = {"gk_gemm_f32": np.float32, "gk_gemm_f32_small": np.float32,
                "gk_gemm_f64": np.float64}  # fmt: skip


def host_gemm(name, args, nbytes):
    """The plans' exact float32 and float64 products (kernels/gemm_f32.cu, gemm_f32_small.cu,
    gemm_f64.cu, whose cp.async and DMMA have no portable path) done on the host from their
    packed block: out = a @ b (+ residual), each sum in float64 rounded once, so not the
    kernels' bits; every tile written (the kernels may skip those above the diagonal with
    `lower`). No bias, activation or split K: what the linalg plans launch."""
    dtype = GEMM_KERNELS[name]
    s = arg_struct("gk_gemm_args")
    blob = ctypes.string_at(args, nbytes)
    f = {k: struct.unpack_from("<" + fmt, blob, off)[0] for k, (fmt, off, _) in s.fields.items()}
    assert f["bias"] == 0 and f["splits"] <= 1, f
    z, m, n, k = f["batch"], f["m"], f["n"], f["k"]
    if 0 in (z, m, n):
        return
    a = _host_view(f["a"], dtype, (z, m, k), (f["sa_z"], f["sa_m"], f["sa_k"]))
    b = _host_view(f["b"], dtype, (z, k, n), (f["sb_z"], f["sb_k"], f["sb_n"]))
    acc = a.astype(np.float64) @ b.astype(np.float64)
    if f["residual"]:
        acc += _host_view(f["residual"], dtype, (z, m, n), (f["sr_z"], f["sr_m"], 1))
    _host_view(f["out"], dtype, (z, m, n), (f["so_z"], f["so_m"], 1))[...] = acc.astype(dtype)
