"""Linear algebra on CUDA. No factorization has a CUDA kernel in gpukit yet: every op is
refused with a clear error (the CPU backend computes them all)."""

from __future__ import annotations


def plan_linalg(backend, op: str, inputs, outputs, options):
    raise NotImplementedError(
        f"linalg.{op} is not implemented on the {backend.name} backend yet (gpukit has no "
        "CUDA factorization kernels); the cpu backend computes it"
    )
