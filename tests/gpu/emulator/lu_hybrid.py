"""A CPU backend whose linalg plans are the CUDA planner's, their launches running the emulated
kernels of kernels/linalg_small.cu and linalg_lu.cu over the CPU backend's memory: gpukit's
front end (decompositions.py, its products and copies on the CPU) drives the CUDA LU."""

from __future__ import annotations

import contextlib

import emulation
import pytest

from gpukit.runtime import devices
from gpukit.runtime.cpu import CpuBackend
from gpukit.runtime.cuda import linalg as cuda_linalg

_ARGS = {
    "linalg_lu.cu": "gk_lu_args",
    "linalg_small.cu": "gk_linalg_args",
    "linalg_qr.cu": "gk_qr_args",
    "linalg_svj.cu": "gk_svj_args",
}


class _Emulated(emulation.EmulatedCuda):
    name = "cuda"

    def __init__(self, lib_dir, seed, pool):
        super().__init__(lib_dir, seed, 8, 227 * 1024)  # 8 SMs: cooperative panels of 1-8 blocks
        self.pool = pool
        self._built = {}

    def run_kernel(self, file, defines, name, grid, block, shared, args, nbytes, cooperative=False):
        if file == "elementwise.cu":  # the LU panel's copy, the blocked Cholesky's zeros and -A
            emulation.host_elementwise(file, defines, name, args, nbytes)
            return
        if name in emulation.GEMM_KERNELS:  # the blocked Cholesky's products
            emulation.host_gemm(name, args, nbytes)
            return
        key = (file, defines, name)
        if key not in self._built:
            self._built[key] = emulation.build_one(file, name, _ARGS[file], defines, self.lib_dir)
        run = self._built[key].cooperative if cooperative else self._built[key]
        run(args, *grid, block[0], shared, self.seed)


class HybridBackend(CpuBackend):
    """The cpu backend, but linear algebra planned as on CUDA and run emulated. `limits`:
    linalg_max_n answers that replace the CUDA planner's (to reach a blocked path at sizes the
    emulator runs quickly); `options`: options added to an op's plans (to force a path)."""

    def __init__(self, lib_dir, seed):
        super().__init__()
        self.emu = _Emulated(lib_dir, seed, self.pool)
        self.limits = {}
        self.options = {}

    def plan_linalg(self, op, inputs, outputs, options):
        # The drivers' panels take the launch per column here: a 16-block cluster or cooperative
        # grid runs every block's threads together, minutes a panel in the emulator. The one-launch
        # panels are compared with it bit for bit where a test names the path (check_panel).
        if op == "lu_panel" and "cooperative" not in dict(options):
            options = (*options, ("cooperative", False))
        options = (*options, *self.options.get(op, ()))
        return cuda_linalg.plan_linalg(self.emu, op, inputs, outputs, options)

    def linalg_max_n(self, op, dtype):
        if op in self.limits:
            return self.limits[op]
        return cuda_linalg.linalg_max_n(self.emu, op, dtype)


@contextlib.contextmanager
def hybrid_cpu(lib_dir, seed):
    """Within the block, the "cpu" device is a HybridBackend (new arrays, *_like, to_device)."""
    rt = HybridBackend(lib_dir, seed)
    key = ("cpu", 0)
    saved = devices._opened.get(key)
    devices._opened[key] = rt
    token = devices.scope(rt)
    try:
        yield rt
    finally:
        devices.unscope(token)
        if saved is None:
            devices._opened.pop(key, None)
        else:
            devices._opened[key] = saved


@pytest.fixture
def hybrid(tmp_path_factory, rng):
    """The "cpu" device as a HybridBackend, the pool's next blocks poisoned
    (tests/api/test_linalg_lu.py's poison_pool); test modules take it as `hybrid =
    lu_hybrid.hybrid` (a second conftest.py would shadow tests/conftest.py's helpers)."""
    from test_linalg_lu import poison_pool

    lib_dir = tmp_path_factory.getbasetemp() / "lu_emulator"
    lib_dir.mkdir(exist_ok=True)
    with hybrid_cpu(lib_dir, int(rng.integers(1 << 30))) as rt:
        poison_pool()
        yield rt
