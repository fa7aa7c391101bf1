"""Fixtures of the emulated linear-algebra tests (test_linalg_*_emulated.py, which put
tests/gpu/emulator and tests/api on sys.path before they import)."""

import pytest


@pytest.fixture
def hybrid(tmp_path_factory, rng):
    """The "cpu" device as emulator/lu_hybrid.py's backend (linear algebra planned as on CUDA,
    its kernels emulated), the pool's next blocks poisoned (tests/api/test_linalg_lu.py)."""
    from lu_hybrid import hybrid_cpu
    from test_linalg_lu import poison_pool

    lib_dir = tmp_path_factory.getbasetemp() / "lu_emulator"
    lib_dir.mkdir(exist_ok=True)
    with hybrid_cpu(lib_dir, int(rng.integers(1 << 30))) as rt:
        poison_pool()
        yield rt
