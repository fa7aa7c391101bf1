"""Runs kernels/fft.cu and fft_aux.cu on the CPU through gk_emulate.h (a host C++ build, g++):
the kernels' own code, shared-memory exchanges and barriers, checked without a GPU. Plans built
by gpukit.runtime.cuda.fft launch into it through a launch table of ctypes callbacks."""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
from pathlib import Path

from gpukit.runtime.args import arg_struct

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parents[2] / "kernels"


def build(aux: bool, defines: tuple, out_dir: Path) -> ctypes.CDLL:
    """The emulated kernels of one instance: fft_aux.cu (aux) or fft.cu."""
    key = hashlib.sha1(repr((aux, defines)).encode()).hexdigest()[:16]
    lib = out_dir / f"fft_emu_{key}.so"
    if not lib.exists():
        cmd = [
            "g++", "-O1", "-std=c++17", "-shared", "-fPIC", "-DGK_EMULATE",
            f"-DGK_FFT_EMU_AUX={int(aux)}", *(f"-D{d}" for d in defines), f"-I{KERNELS}",
            f"-I{HERE}", str(HERE / "fft_driver.cpp"), "-o", str(lib),
        ]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
    so = ctypes.CDLL(str(lib))
    so.gk_emu_field_offset.restype = ctypes.c_long
    so.gk_emu_field_offset.argtypes = (ctypes.c_char_p,)
    so.gk_emu_run.argtypes = (ctypes.c_void_p, ctypes.c_char_p, *[ctypes.c_uint] * 6)
    # The host build's struct must be the block gpukit packs (the layout _native read).
    args = arg_struct("gk_fft_aux_args" if aux else "gk_fft_args")
    assert so.gk_emu_args_size() == args.size
    for field, (_, offset, _) in args.fields.items():
        assert so.gk_emu_field_offset(field.encode()) == offset, field
    return so


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
