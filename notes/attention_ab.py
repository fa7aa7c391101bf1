"""Another source of kernels/attention_sm90.cu (VARIANT: a file) against the installed one, on
bench_attention.py's prefill rows in one process: the variant and the installed kernel in the
shipped tiles of the row's mask, the installed kernel persistent with the folded exponent, and
torch's SDPA, timed in three alternating rounds; whether the variant gives the installed kernel's
bits. Run from the repository root after scripts/gpu_machine.sh installed gpukit:

    git show REV:kernels/attention_sm90.cu > /tmp/attention_sm90.cu
    PYTHONPATH=/tmp/gpukit-site VARIANT=/tmp/attention_sm90.cu python3 notes/attention_ab.py

(The lead's call 3 of 2026-12-07: main's kernel before the merge of branch attn-persist.)
"""

import dataclasses
import importlib
import os
import sys

import numpy as np
import torch

import gpukit as gk
from gpukit import nn
from gpukit.runtime import jit
from gpukit.runtime.cuda import attention_geometry

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from bench_attention import PREFILL as ROWS
from bench_attention import seconds_per_call

SDPA = torch.nn.functional.scaled_dot_product_attention
INSTALLED = dict(jit.builtin_sources())
with open(os.environ["VARIANT"]) as f:
    VARIANT = dict(INSTALLED, **{"attention_sm90.cu": f.read()})
PLANS = importlib.import_module("gpukit.array")._PLANS  # gpukit.array is also a function


def use(sources, table, d, tiles):
    """Kernel sources and the row's tiles; every compiled function and plan dropped."""
    gk.synchronize()
    jit._SOURCES = sources
    rt = gk.asarray([0.0])._rt
    rt._functions.clear()
    rt._modules.clear()
    PLANS.clear()
    table[d] = tiles


def time_row(rng, dtype, b, h, s, d, causal) -> str:
    """One prefill row: each variant's best TFLOP/s and its ratio to torch's best."""
    host = [rng.standard_normal((b, h, s, d), np.float32) for _ in range(3)]
    tq, tk, tv = (torch.from_numpy(x).cuda().to(getattr(torch, dtype)) for x in host)
    flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
    np_dtype = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    q, k, v = (gk.asarray(x.astype(np_dtype)) for x in host)
    table = attention_geometry.sm90_table(causal)
    shipped = table[d]
    plain = dataclasses.replace(shipped, persist=False, fold=False)
    variants = [
        ("variant", VARIANT, plain),
        ("installed", INSTALLED, plain),
        ("persist+fold", INSTALLED, dataclasses.replace(plain, persist=True, fold=True)),
    ]
    bits, tflops, torch_tflops = {}, {n: [] for n, _, _ in variants}, []

    def ours():
        return nn.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def theirs():
        return SDPA(tq, tk, tv, is_causal=causal)

    for name, sources, tiles in variants:
        use(sources, table, d, tiles)
        bits[name] = ours().to_numpy().view(np.uint16)
    for _ in range(3):
        torch_tflops.append(flops / seconds_per_call(theirs, torch.cuda.synchronize) / 1e12)
        for name, sources, tiles in variants:
            use(sources, table, d, tiles)
            tflops[name].append(flops / seconds_per_call(ours, gk.synchronize) / 1e12)
    use(INSTALLED, table, d, shipped)
    best = max(torch_tflops)
    cells = " | ".join(f"{n} {max(r):.1f} ({max(r) / best:.3f})" for n, r in tflops.items())
    same = np.array_equal(bits["variant"], bits["installed"])
    return f"torch {best:.1f} | {cells} | variant's bits = installed's: {same}"


def main():
    rng = np.random.default_rng(1)
    for label, *shape in ROWS:
        print(f"{label} | {time_row(rng, *shape)}", flush=True)


if __name__ == "__main__":
    main()
