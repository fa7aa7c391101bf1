"""The matrix-product kernels without a GPU: the sm_90a GEMM compiles with NVRTC and, where
cuobjdump is installed (pip's nvidia-cuda-cuobjdump, with nvidia-cuda-nvdisasm), its SASS holds
wgmma (HGMMA) fed by TMA (UTMALDG) and no local-memory spills; the parameter layout its cubin
declares is the one its plans pack (and, on a GPU, the one the driver reports); every argument
block of kernels/args.cuh has the same layout in NVRTC's device code as in _native's host C++."""

import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import pytest

import gpukit as gk
from gpukit import _native, jit
from gpukit.errors import BackendUnavailableError
from gpukit.runtime import kernels, open_backend
from gpukit.runtime.args import arg_struct
from gpukit.runtime.cuda import gemm


def _nvrtc():
    try:
        return jit.open_compiler("nvrtc")[0]
    except BackendUnavailableError as e:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have NVRTC: {e}")
        pytest.skip(str(e))


def _sm90a():
    compiler = _nvrtc()
    if 90 not in compiler.supported_archs():
        pytest.skip(f"NVRTC {compiler.version} cannot build sm_90a")
    return jit.Jit(compiler, ["--gpu-architecture=sm_90a"])


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUKIT_CACHE_DIR", str(tmp_path / "cache"))


def _cuobjdump():
    """cuobjdump (cuobjdump -sass runs the nvdisasm beside it), or None."""
    found = shutil.which("cuobjdump")
    if found is None:
        for root in sys.path:
            hits = glob.glob(os.path.join(root, "nvidia", "*", "bin", "cuobjdump"))
            if hits:
                found = hits[0]
                break
    return found


def _sass(tool, image: bytes) -> tuple[str, str]:
    env = {**os.environ, "PATH": os.path.dirname(tool) + os.pathsep + os.environ.get("PATH", "")}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(image)
        f.flush()
        sass = subprocess.run(
            [tool, "-sass", f.name], capture_output=True, text=True, env=env, check=True
        ).stdout
        res = subprocess.run(
            [tool, "-res-usage", f.name], capture_output=True, text=True, env=env, check=True
        ).stdout
    return sass, res


def test_sm90a_kernels_compile_to_wgmma_fed_by_tma_without_spills():
    """The GEMM and the attention prefill (kernels/attention_sm90.cu)."""
    j = _sm90a()
    tool = _cuobjdump()
    for file, defines in kernels.sm90a_instances():
        image = j.build_builtin(file, defines)
        assert image[:4] == b"\x7fELF", defines
        for name in kernels.kernels_of(file, defines):
            assert name.encode() in image, name
        if tool is None:
            continue
        sass, res = _sass(tool, image)
        assert "HGMMA" in sass, defines
        assert "UTMALDG" in sass, defines
        assert " LDL" not in sass and " STL" not in sass, f"local memory in {defines}"
        if file == "gemm_sm90.cu":  # the bulk-store epilogue's row copies, where it is built
            assert ("UBLKCP" in sass) == ("GK_GEMM_BULK_STORE=1" in defines), defines
        assert "STACK:0 " in res.split(kernels.kernels_of(file, defines)[0])[1], res
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have cuobjdump (the test extra installs nvidia-cuda-cuobjdump)")
        pytest.skip("no cuobjdump: compiled, SASS not inspected")


def test_gemv_kernels_do_not_spill():
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump")
    j = jit.Jit(_nvrtc(), ["--gpu-architecture=sm_90"])
    for file, defines in kernels.representative_instances("cuda", 90):
        if file != "gemv.cu":
            continue
        sass, _ = _sass(tool, j.build_builtin(file, defines))
        assert " LDL" not in sass and " STL" not in sass, f"local memory in {file} {defines}"


def k_loop(body: str) -> list[str]:
    """The instructions of a kernel's loop (a backward branch's body) with the most FFMA, from
    the kernel's SASS (also notes/f32_sass.py's)."""
    code = [(int(a, 16), i) for a, i in re.findall(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", body)]
    best = []
    for addr, ins in code:
        target = re.search(r"BRA (0x[0-9a-f]+)", ins)
        if target and int(target.group(1), 16) < addr:
            loop = [i for a, i in code if int(target.group(1), 16) <= a <= addr]
            if sum("FFMA" in i for i in loop) > sum("FFMA" in i for i in best):
                best = loop
    return best


def test_exact_float32_loop_loads_the_next_slice_early_without_spills():
    """The unsplit 16-byte instances of gemm_f32.cu (what large products take): no stack, the next
    K slice's global loads issued before the last quarter of the K loop's multiply-adds. When the
    split-K workspace's addressing was live through the loop (one instance for both), ptxas sank
    those loads next to their shared-memory stores and spilled: 38 against 44 TFLOP/s on the
    H100 at 4096^3. (The split-K instance, for products of few tiles, may keep a few values on
    the stack: NVRTC 13.5 does for two layouts.)"""
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump")
    j = jit.Jit(_nvrtc(), ["--gpu-architecture=sm_90"])
    for a_mn in (False, True):
        for b_mn in (False, True):
            defines = kernels.gemm_f32(a_mn, b_mn, True)[1]
            sass, res = _sass(tool, j.build_builtin("gemm_f32.cu", defines))
            assert "STACK:0 " in res.split("Function gk_gemm_f32:")[1], (defines, res)
            loop = k_loop(sass.split("Function : gk_gemm_f32\n")[1].split("Function : ")[0])
            assert sum("FFMA" in i for i in loop) == 512, defines
            loads = [n for n, i in enumerate(loop) if "LDG" in i]
            assert loads and max(loads) < 0.75 * len(loop), (defines, loads, len(loop))


# --- parameter layouts ---------------------------------------------------------------------------

_KPARAM_INFO, _CBANK_PARAM_SIZE = 0x17, 0x19


def cubin_params(image: bytes, kernel: str) -> tuple[list[tuple[int, int]], int]:
    """([(offset, size)] of `kernel`'s parameters by ordinal, the parameter bank's bytes) as the
    cubin's .nv.info.<kernel> section declares them (EIATTR_KPARAM_INFO records: index u32,
    ordinal u16, offset u16, then flags whose top 14 bits are the size; EIATTR_CBANK_PARAM_SIZE)."""
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    entsize, count, names_at = struct.unpack_from("<HHH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * entsize) for i in range(count)]
    names = sections[names_at][4]

    def name(h):
        start = names + h[0]
        return image[start : image.index(b"\0", start)].decode()

    (info,) = [h for h in sections if name(h) == f".nv.info.{kernel}"]
    body = image[info[4] : info[4] + info[5]]
    params, bank, at = {}, None, 0
    while at < len(body):
        fmt, attr = body[at], body[at + 1]
        if fmt == 4:  # a sized value
            size = struct.unpack_from("<H", body, at + 2)[0]
            if attr == _KPARAM_INFO:
                _, ordinal, offset, flags = struct.unpack_from("<IHHI", body, at + 4)
                params[ordinal] = (offset, flags >> 18)
            at += 4 + size
        else:
            if attr == _CBANK_PARAM_SIZE:
                bank = struct.unpack_from("<H", body, at + 2)[0]
            at += 4
    return [params[i] for i in range(len(params))], bank


class _Declared:
    """A stand-in backend whose param_layout is what a cubin declares."""

    def __init__(self, params):
        self.params = params

    def param_layout(self, fn, count):
        return self.params


def test_the_sm90_parameters_the_cubin_declares_are_the_ones_packed():
    j = _sm90a()
    size = arg_struct("gk_gemm_sm90_args").size
    for file, defines in kernels.sm90a_instances():
        if file != "gemm_sm90.cu":
            continue
        image = j.build_builtin(file, defines)
        params, bank = cubin_params(image, "gk_gemm_sm90")
        # Two 64-byte aligned tensor maps sit where the parameter bank (at 0x210 of constant
        # bank 0 on sm_90) puts them 64-byte aligned: not at C packing's 0 and 128.
        assert params == [(0x30, 128), (0xB0, 128), (0x130, size)], defines
        offsets = gemm.sm90_params(_Declared(params), None)
        assert offsets == (0x30, 0xB0, 0x130)
        assert bank == offsets[2] + size  # the whole buffer a plan launches with
        assert cubin_params(image, "gk_gemm_splitk_reduce")[0] == [(0, size)]


def test_kernels_of_one_block_take_it_at_offset_zero():
    """The GEMV, exact-f32 (both tiles) and tensor-core attention kernels: one parameter, the
    whole block."""
    j = jit.Jit(_nvrtc(), ["--gpu-architecture=sm_90"])
    blocks = {
        "gemv.cu": "gk_gemv_args",
        "gemm_f32.cu": "gk_gemm_args",
        "gemm_f32_small.cu": "gk_gemm_args",
        "attention_tc.cu": "gk_attn_tc_args",
        "attention_decode.cu": "gk_attn_tc_args",
    }
    for file, defines in kernels.representative_instances("cuda", 90):
        if file in blocks:
            image = j.build_builtin(file, defines)
            for name in kernels.kernels_of(file, defines):
                size = arg_struct(blocks[file]).size
                assert cubin_params(image, name)[0] == [(0, size)], (file, name)


def test_device_and_host_compilers_lay_every_argument_block_out_alike():
    """_native compiled kernels/args.cuh with the host's C++ compiler; NVRTC compiles it for the
    kernels: the same sizes and alignments (checked by NVRTC itself) and the same offsets (written
    by a kernel NVRTC compiled, read back where a GPU runs it; NVRTC 13.0 has no
    __builtin_offsetof)."""
    layouts = _native.arg_layouts()
    lines = ['#include "args.cuh"']
    expected, stores = [], []
    for name, (size, align, fields) in layouts.items():
        lines.append(f'static_assert(sizeof({name}) == {size}, "{name}");')
        lines.append(f'static_assert(alignof({name}) == {align}, "{name}");')
        stores.append(f"    {{ const {name}* p = ({name}*)probe;")
        for field, _, offset, _, _ in fields:
            stores.append(
                f"      out[{len(expected)}] = (gk_u64)((const char*)&p->{field} - (const char*)p);"
            )
            expected.append(offset)
        stores.append("    }")
    source = "\n".join(
        [
            *lines,
            'extern "C" __global__ void gk_layout_probe(gk_u64* out, const void* probe) {',
            *stores,
            "}",
        ]
    )
    image = jit.Jit(_nvrtc(), ["--gpu-architecture=sm_80"]).build("layouts.cu", source)
    assert image[:4] == b"\x7fELF"
    if "cuda" not in gk.available_backends():
        return
    out = gk.full(len(expected), 2**64 - 1, dtype="uint64", device="cuda:0")
    probe = gk.zeros(64 * 1024, dtype="uint8", device="cuda:0")
    gk.RawKernel(source, "gk_layout_probe")((1,), (1,), (out, probe))
    assert out.to_numpy().tolist() == expected


def test_the_driver_reports_the_parameters_the_cubin_declares():
    if "cuda" not in gk.available_backends():
        pytest.skip("no CUDA GPU here")
    rt = open_backend("cuda")
    if not rt.sm90a:
        pytest.skip("no sm_90 GPU with an sm_90a compiler and a CUDA 12.4+ driver")
    file, defines = kernels.sm90a_instances()[0]
    fn = rt.function(file, defines, "gk_gemm_sm90")
    image = rt.sm90a_jit.build_builtin(file, defines)
    declared = cubin_params(image, "gk_gemm_sm90")[0]
    assert rt.param_layout(fn, len(declared)) == declared
