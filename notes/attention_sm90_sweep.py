"""Dev harness (GPU machine, after scripts/gpu_machine.sh has installed gpukit): the sm_90a
prefill (kernels/attention_sm90.cu) in several tile variants on bench_attention.py's prefill rows,
each first checked against torch's SDPA in float32 on the same inputs, then timed beside the
sm_80 kernel (kernels/attention_tc.cu) and torch in the same process. Variants are swapped in by
replacing kernels.ATTENTION_SM90_TILES entries and dropping cached plans; "mma.sync" disables
the sm_90a plan. Writes $OUT/attention_sm90_sweep.json.

usage: PYTHONPATH=/tmp/gpukit-site python3 notes/attention_sm90_sweep.py
"""

import json
import os
import sys

import numpy as np
import torch

import gpukit as gk
import gpukit.array  # (the module, for its plan cache)
from gpukit import nn
from gpukit.runtime import kernels
from gpukit.runtime.cuda import attention

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from bench_attention import PREFILL as ROWS
from bench_attention import seconds_per_call

T = kernels.AttentionSm90Tiles
# (keys, stages, pipe, pingpong); call 2 (notes/attention.md) also timed "mma.sync" and the
# first kernel's variants.
VARIANTS = {
    64: [T(128, 4, 1, 1), T(128, 4, 1, 0), T(128, 4, 0, 0), T(128, 2, 1, 1)],
    128: [T(128, 2, 1, 1), T(128, 2, 1, 0), T(128, 2, 0, 0), T(128, 2, 0, 1), T(128, 3, 1, 1)],
    256: [T(64, 2, 1, 1), T(64, 2, 1, 0), T(64, 2, 0, 0), T(64, 2, 0, 1)],
}


def main():
    shipped = dict(kernels.ATTENTION_SM90_TILES)
    plan_sm90 = attention._plan_sm90
    rng = np.random.default_rng(1)
    results = []
    for label, dtype, b, h, s, d, causal in ROWS:
        host = [rng.standard_normal((b, h, s, d), np.float32) for _ in range(3)]
        tdt = getattr(torch, dtype)
        tq, tk, tv = (torch.from_numpy(x).cuda().to(tdt) for x in host)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        ref = sdpa(tq.float(), tk.float(), tv.float(), is_causal=causal)
        t_torch = seconds_per_call(
            lambda a=(tq, tk, tv), c=causal: torch.nn.functional.scaled_dot_product_attention(
                *a, is_causal=c
            ),
            torch.cuda.synchronize,
        )
        fl = 4.0 * b * h * s * s * d / (2 if causal else 1)
        np_dtype = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
        q, k, v = (gk.asarray(x.astype(np_dtype)) for x in host)
        row = {"case": label, "torch": fl / t_torch / 1e12, "variants": {}}
        for variant in VARIANTS[d]:
            sys.modules["gpukit.array"]._PLANS.clear()
            if variant == "mma.sync":
                attention._plan_sm90 = lambda *a, **k: None
            else:
                attention._plan_sm90 = plan_sm90
                kernels.ATTENTION_SM90_TILES[d] = variant
            name = variant
            if variant != "mma.sync":
                name = f"n{variant.keys}s{variant.stages}p{int(variant.pipe)}"
                name += f"pp{int(variant.pingpong)}"
            try:
                out = nn.scaled_dot_product_attention(q, k, v, is_causal=causal)
                got = torch.from_numpy(out.to_numpy().astype(np.float32)).cuda()
                err = float((got - ref).norm() / ref.norm())
                t = seconds_per_call(
                    lambda a=(q, k, v), c=causal: nn.scaled_dot_product_attention(*a, is_causal=c),
                    gk.synchronize,
                )
                row["variants"][name] = {"tflops": fl / t / 1e12, "err": err}
            except Exception as e:  # a variant that fails to build or run is reported, not fatal
                row["variants"][name] = {"error": repr(e)[:300]}
            print(label, name, row["variants"][name], flush=True)
        kernels.ATTENTION_SM90_TILES.update(shipped)
        attention._plan_sm90 = plan_sm90
        print(f"{label}: torch {row['torch']:.1f} TFLOP/s", flush=True)
        results.append(row)
        del tq, tk, tv, ref
    print("\ncase | torch | " + " | ".join(["variant: TFLOP/s (ratio, err)"]))
    for row in results:
        cells = []
        for name, r in row["variants"].items():
            if "tflops" in r:
                ratio = r["tflops"] / row["torch"]
                cells.append(f"{name} {r['tflops']:.1f} ({ratio:.2f}, {r['err']:.1e})")
            else:
                cells.append(f"{name} ERR")
        print(f"{row['case']} | {row['torch']:.1f} | " + " | ".join(cells))
    with open(os.path.join(os.environ.get("OUT", "."), "attention_sm90_sweep.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
