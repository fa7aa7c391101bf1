"""The package itself: import, backend choice, info(), the embedded kernel sources."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpukit as gk

REPO = Path(__file__).resolve().parents[2]


def run_python(code, **env):
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_backend_is_one_of_the_three():
    assert gk.backend() in ("cuda", "hip", "cpu")
    assert "cpu" in gk.available_backends()


def test_info_reports_backend_and_libraries():
    info = gk.info()
    assert info["backend"] == gk.backend()
    for key in ("CUDA driver", "NVRTC", "HIP runtime", "hiprtc"):
        assert info[key].startswith(("found at", "not found")), info[key]
    text = str(info)
    assert "backend" in text and gk.__version__ in text
    if gk.backend() == "cpu":
        assert "cuda unavailable" in info


def test_cpu_can_be_forced():
    r = run_python("import gpukit; print(gpukit.backend())", GPUKIT_BACKEND="cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cpu"


def test_unknown_backend_is_a_clear_error():
    r = run_python("import gpukit; gpukit.backend()", GPUKIT_BACKEND="tpu")
    assert r.returncode == 1
    assert "GPUKIT_BACKEND='tpu' is not a backend" in r.stderr


@pytest.mark.parametrize("name", ["cuda", "hip"])
def test_forcing_a_missing_gpu_backend_says_why(name):
    if name in gk.available_backends():
        pytest.skip(f"{name} is available here")
    r = run_python("import gpukit; gpukit.arange(3)", GPUKIT_BACKEND=name)
    assert r.returncode == 1
    assert f"GPUKIT_BACKEND={name} but that backend is unavailable" in r.stderr
    assert "BackendUnavailableError" in r.stderr


def test_import_never_touches_the_driver():
    code = "import gpukit, sys; sys.exit(bool(gpukit.runtime.opened()))"
    r = run_python(code, GPUKIT_BACKEND="tpu")
    assert r.returncode == 0, r.stderr  # a bad GPUKIT_BACKEND only fails at first use


def test_every_kernel_file_is_embedded_verbatim():
    files = sorted(p.name for p in (REPO / "kernels").iterdir() if p.suffix in (".cu", ".cuh"))
    assert gk.jit.list_kernels() == files
    for name in files:
        assert gk.jit.kernel_source(name) == (REPO / "kernels" / name).read_text()
    with pytest.raises(KeyError, match="no built-in kernel file"):
        gk.jit.kernel_source("missing.cu")
