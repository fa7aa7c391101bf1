"""Run-time compilation without a GPU: every built-in kernel compiles for the architectures we
ship for, compile errors carry the compiler's log, and the kernel cache is atomic and
self-healing."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpukit as gk
from gpukit import jit
from gpukit.base import dtypes as _dtypes
from gpukit.errors import BackendUnavailableError
from gpukit.runtime import kernels as _kernels
from gpukit.runtime.ops import ELEMENTWISE

ELF = b"\x7fELF"


def compiler(kind):
    try:
        return jit.open_compiler(kind)[0]
    except BackendUnavailableError as e:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have {kind}: {e}")
        pytest.skip(str(e))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize("arch", [80, 89, 90])
def test_every_builtin_kernel_compiles_to_cubin(arch):
    j = jit.Jit(compiler("nvrtc"), [f"--gpu-architecture=sm_{arch}"])
    for file, defines in _kernels.representative_instances("cuda", arch):
        image = j.build_builtin(file, defines)
        assert image[:4] == ELF, (file, defines)
        for name in _kernels.kernels_of(file, defines):
            assert name.encode() in image, (file, name)


def test_every_kernel_file_has_instances_that_the_compile_tests_build():
    """Each kernels/*.cu is in representative_instances (built here for sm_80/89/90 and for
    gfx90a unless NVIDIA-only) or, built for sm_90a alone, in sm90a_instances
    (tests/gpu/test_gemm_kernels.py)."""
    files = {f for f in jit.list_kernels() if f.endswith(".cu")}
    cuda = {f for f, _ in _kernels.representative_instances("cuda", 90)}
    sm90a = {f for f, _ in _kernels.sm90a_instances()}
    assert sm90a == set(_kernels.SM90A_FILES) and not cuda & sm90a
    assert cuda | sm90a == files
    hip = {f for f, _ in _kernels.representative_instances("hip")}
    assert files - hip == set(_kernels.CUDA_MIN_ARCH)


def _instances_of_every_op(kinds):
    """An instance of every op of the table for each of `kinds` (dtype names) its rule takes:
    loop, result and operand dtypes as a call on arrays of that dtype resolves them."""
    b = np.dtype("bool")
    for op in ELEMENTWISE.values():
        for kind in kinds:
            dt = np.dtype(kind)
            inputs = ((b,) if op.name == "where" else ()) + (dt,) * (
                op.arity - (op.name == "where")
            )
            if op.name == "ldexp":
                inputs = (dt, np.dtype("int32"))
            try:
                loop, out = _dtypes.resolve(op.rule, *inputs)
            except TypeError:
                continue
            if not (op.real_only and loop.kind == "c"):
                yield op.name, _kernels.elementwise(op.name, loop, out, inputs)


@pytest.mark.parametrize(
    "kinds", [("float32", "int32"), ("complex64", "complex128")], ids=["real", "complex"]
)
def test_every_elementwise_op_of_the_table_compiles(kinds):
    """A new op's C expression compiles in every kind of loop it has (one float, one integer;
    both complex dtypes)."""
    j = jit.Jit(compiler("nvrtc"), ["--gpu-architecture=sm_90"])
    seen = set()
    for name, (file, defines) in _instances_of_every_op(kinds):
        image = j.build_builtin(file, defines)
        seen.add(name)
        for kernel in _kernels.kernels_of(file, defines):
            assert kernel.encode() in image, (name, kernel)
    if "complex64" in kinds:
        assert {"exp", "arctanh", "power", "conjugate", "angle", "isfinite"} <= seen
    else:
        assert seen == set(ELEMENTWISE)


HIP_COMPILE = """
import sys
from gpukit import jit
from gpukit.runtime import kernels as _kernels
from gpukit.errors import BackendUnavailableError
try:
    j = jit.Jit(jit.open_compiler("hiprtc")[0], ["--offload-arch=gfx90a"])
except BackendUnavailableError as e:
    print(e)
    sys.exit(3)
for file, defines in _kernels.representative_instances("hip"):
    image = j.build_builtin(file, defines)
    assert image[:4] == b"\\x7fELF", (file, defines)
    for name in _kernels.kernels_of(file, defines):
        assert name.encode() in image, (file, name)
print("ok")
"""


def test_every_builtin_kernel_compiles_for_amd_gfx90a():
    # In a child on the CPU backend: hiprtc is never loaded beside the CUDA driver (see jit.py).
    env = {**os.environ, "GPUKIT_BACKEND": "cpu"}
    r = subprocess.run(
        [sys.executable, "-c", HIP_COMPILE], env=env, capture_output=True, text=True, timeout=600
    )
    if r.returncode == 3:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have hiprtc: {r.stdout}")
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "ok"


def test_ptx_when_asked_for_a_virtual_architecture():
    j = jit.Jit(compiler("nvrtc"), ["--gpu-architecture=compute_90"])
    ptx = j.build_builtin(*_kernels.arange(gk.zeros(1, "float32").dtype))
    assert b".target sm_90" in ptx and b".entry gk_arange" in ptx


def test_a_bad_kernel_raises_compile_error_with_the_log():
    j = jit.Jit(compiler("nvrtc"), ["--gpu-architecture=sm_90"])
    bad = 'extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }'
    with pytest.raises(gk.CompileError) as info:
        j.build("broken.cu", bad)
    assert "NVRTC could not compile broken.cu" in str(info.value)
    assert 'identifier "undefined_name" is undefined' in info.value.log
    assert "undefined_name" in str(info.value), "the message carries the log too"


class FakeNvrtc:
    version = (12, 4)
    path = "/fake/libnvrtc.so"

    def supported_archs(self):
        return [75, 80, 86, 89, 90]


@pytest.mark.parametrize(
    "cc,expected",
    [((9, 0), "sm_90"), ((8, 6), "sm_86"), ((12, 0), "compute_90"), ((10, 0), "compute_90")],
)
def test_cubin_for_known_gpus_ptx_only_for_newer_ones(cc, expected):
    assert jit.nvrtc_arch_options(FakeNvrtc(), cc) == [f"--gpu-architecture={expected}"]


def test_a_gpu_older_than_nvrtc_supports_is_a_clear_error():
    with pytest.raises(BackendUnavailableError, match="cannot compile for sm_70"):
        jit.nvrtc_arch_options(FakeNvrtc(), (7, 0))


def build_small(j, value=1):
    src = 'extern "C" __global__ void k(float* x) { x[0] = GK_VALUE; }'
    return j.build("small.cu", src, [f"-DGK_VALUE={value}"])


def test_cache_hits_in_memory_then_on_disk(private_cache):
    j = jit.Jit(compiler("nvrtc"), ["--gpu-architecture=sm_90"])
    cache = jit.kernel_cache()
    before = cache.stats()
    image = build_small(j)
    assert build_small(j) == image
    cache.clear_memory()
    assert build_small(j) == image
    after = cache.stats()
    assert after["misses"] - before["misses"] == 1
    assert after["memory_hits"] - before["memory_hits"] == 1
    assert after["disk_hits"] - before["disk_hits"] == 1
    assert gk.jit.cache_info()["entries"] == 1


def test_cache_key_changes_with_options_and_arch(private_cache):
    nvrtc = compiler("nvrtc")
    images = {
        build_small(jit.Jit(nvrtc, ["--gpu-architecture=sm_90"]), 1),
        build_small(jit.Jit(nvrtc, ["--gpu-architecture=sm_90"]), 2),
        build_small(jit.Jit(nvrtc, ["--gpu-architecture=sm_80"]), 1),
    }
    assert len(images) == 3
    assert gk.jit.cache_info()["entries"] == 3
    assert not list(Path(private_cache).glob("*.tmp.*")), "no temporary file is left behind"


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_corrupt_entry_is_recompiled_and_rewritten(private_cache, damage):
    j = jit.Jit(compiler("nvrtc"), ["--gpu-architecture=sm_90"])
    image = build_small(j)
    (entry,) = Path(private_cache).glob("*.bin")
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        entry.write_bytes(data[:-20] + bytes([data[-20] ^ 0xFF]) + data[-19:])
    else:
        entry.write_bytes(b"not a cache entry")
    cache = jit.kernel_cache()
    cache.clear_memory()
    rejected = cache.stats()["rejected"]
    assert build_small(j) == image
    assert cache.stats()["rejected"] == rejected + 1
    assert entry.read_bytes() == data, "the entry was rewritten whole"


def test_many_processes_compiling_one_kernel_at_once(private_cache):
    code = (
        "from gpukit import jit; c = jit.open_compiler('nvrtc')[0];"
        "j = jit.Jit(c, ['--gpu-architecture=sm_90']);"
        "src = 'extern \"C\" __global__ void k(float* x) { x[0] = 42; }';"
        "import sys; sys.stdout.buffer.write(j.build('race.cu', src))"
    )
    compiler("nvrtc")
    env = {**os.environ, "GPUKIT_CACHE_DIR": str(private_cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
        for _ in range(6)
    ]
    images = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(images)) == 1 and images[0][:4] == ELF
    assert len(list(Path(private_cache).glob("*.bin"))) == 1
    assert not list(Path(private_cache).glob("*.tmp.*"))


def test_clear_cache_empties_disk_and_memory(private_cache):
    j = jit.Jit(compiler("nvrtc"), ["--gpu-architecture=sm_90"])
    build_small(j)
    gk.jit.clear_cache()
    assert gk.jit.cache_info()["entries"] == 0
    misses = jit.kernel_cache().stats()["misses"]
    build_small(j)
    assert jit.kernel_cache().stats()["misses"] == misses + 1


def test_info_reports_the_cache(private_cache):
    info = gk.info()
    assert str(private_cache) in info["kernel cache"]
