"""Dev harness (GPU machine, after scripts/gpu_machine.sh has installed gpukit): the sm_90a GEMM's
two epilogues on the small-K batched row of issue 13 (64 x (512x128 @ 128x512) bf16), with 8192^3,
4096^3 and linear 4096x4096->11008 as guards. Variants: "base", the staged epilogue forced
(gemm_plan.sm90_bulk wrapped to say no), and "bulk", the plan's default (the bulk-store
epilogue wherever gemm_plan.sm90_bulk allows it); cached plans are dropped between variants.
Each variant is first checked on small products against float64 on the host (tails in m and n,
n % 8 != 0 and split K, which fall back to the staged epilogue, a fused epilogue; output poisoned,
run twice for the same bits), then on each timed row against torch's float32 product of the same
operands (poisoned, same bits twice, bits compared with the first variant), then timed beside
torch (bench_matmul's events_ms: same operands back to back, as bench_matmul's batched row).
Writes $OUT/batched_sweep.json and prints a table. notes/gemm.md, "batched", has the predictions.

usage: PYTHONPATH=/tmp/gpukit-site python3 notes/batched_sweep.py
"""

import json
import os
import sys
import time

import numpy as np
import torch

import gpukit as gk
import gpukit.array  # (the module, for its plan cache)
from gpukit.runtime.cuda import gemm_plan

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from bench_matmul import gk_ms, torch_ms
from gemm_sweep import host, poison, small_checks

F = torch.nn.functional
_bulk = gemm_plan.sm90_bulk

# name: whether the plan may take the bulk-store epilogue
VARIANTS = {
    "base": False,  # the staged epilogue everywhere (128 x 256: 4 stages)
    "bulk": True,  # the default: bulk-store where gemm_plan.sm90_bulk allows (128 x 256: 3 stages)
}


def use(name):
    gemm_plan.sm90_bulk = _bulk if VARIANTS[name] else (lambda *facts: False)
    sys.modules["gpukit.array"]._PLANS.clear()


def small_cases(rng):
    """(step, float64 reference, output bytes) by label."""
    f64 = np.float64
    cases = {}

    def product(label, sa, sb):
        ha, hb = host(rng, sa), host(rng, sb)
        a, b = gk.asarray(ha), gk.asarray(hb)
        ref = np.matmul(ha.astype(f64), hb.astype(f64))
        cases[label] = (lambda: a @ b, ref, ref.size * 2)

    product("batched 8x(512x128@128x520) (n tail of 8)", (8, 512, 128), (8, 128, 520))
    product("batched 3x(1000x264@264x1000) (m, n tails)", (3, 1000, 264), (3, 264, 1000))
    product("1000x264@264x1001 (n % 8: staged)", (1000, 264), (264, 1001))
    product("257x4104@4104x520 (split K: staged)", (257, 4104), (4104, 520))
    hx, hw, hbias = host(rng, (1000, 264)), host(rng, (1000, 264)), host(rng, (1000,))
    x, w, bias = gk.asarray(hx), gk.asarray(hw), gk.asarray(hbias)
    ref = np.maximum(hx.astype(f64) @ hw.astype(f64).T + hbias, 0)

    def linear():
        return gk.linear(x, w, bias, "relu")

    cases["linear 1000x264->1000 bias relu"] = (linear, ref, ref.size * 2)
    return cases


def main():
    out_dir = os.environ.get("OUT", ".")
    rng = np.random.default_rng(5)
    torch.backends.cuda.matmul.allow_tf32 = False
    results = {"device": gk.info().get("device"), "checks": {}, "rows": []}
    t_start = time.time()

    def save():
        with open(os.path.join(out_dir, "batched_sweep.json"), "w") as f:
            json.dump(results, f, indent=1, default=str)

    cases = small_cases(rng)
    bad = set()
    for name in VARIANTS:
        use(name)
        try:
            checks = small_checks(cases)
            if not all(err < 1e-2 and same for err, same in checks.values()):
                bad.add(name)
        except Exception as e:  # a variant that fails to build or run is reported, not timed
            checks = {"error": repr(e)[:300]}
            bad.add(name)
        results["checks"][name] = checks
        print(f"check {name}{' BAD' if name in bad else ''}: {checks}", flush=True)
    save()
    print(f"\n{'row':32s} {'variant':12s} TFLOP/s {'time':>11s} {'torch':>7s} {'ratio':>6s} err")

    def row(label, m, k, n, batch, names, bt=False):
        shape_a = (batch, m, k) if batch else (m, k)
        shape_b = (n, k) if bt else (k, n)
        shape_b = (batch, *shape_b) if batch else shape_b
        ha, hb = host(rng, shape_a), host(rng, shape_b)
        a, b = gk.asarray(ha), gk.asarray(hb)
        ta, tb = (torch.from_numpy(v.astype(np.float32)).cuda().bfloat16() for v in (ha, hb))
        flops = 2 * m * k * n * max(batch, 1)
        if bt:  # linear: a @ w.T
            gk_step, t_step = (lambda: gk.linear(a, b)), (lambda: F.linear(ta, tb))
            ref = F.linear(ta.float(), tb.float())
        else:
            gk_step, t_step = (lambda: a @ b), (lambda: ta @ tb)
            ref = ta.float() @ tb.float()
        entry = {"row": label, "variants": {}}
        entry["torch_ms"] = torch_ms(torch, t_step)
        entry["torch_tflops"] = flops / entry["torch_ms"] / 1e9
        first = None
        for name in names:
            if name in bad:
                continue
            use(name)
            info = {}
            try:
                poison(ref.numel() * 2)
                bits = gk_step().to_numpy()
                g = torch.from_numpy(bits.astype(np.float32)).cuda()
                info["err"] = float((g - ref).norm() / ref.norm())
                info["finite"] = bool(torch.isfinite(g).all())
                info["same_bits"] = bool(np.array_equal(bits, gk_step().to_numpy()))
                if first is None:
                    first = bits
                else:
                    info["bits_as_first"] = bool(np.array_equal(bits, first))
                del g
                if info["finite"] and info["err"] < 1e-2:
                    info["ms"] = gk_ms(gk_step)
                    info["tflops"] = flops / info["ms"] / 1e9
            except Exception as e:
                info = {"error": repr(e)[:300]}
            entry["variants"][name] = info
            if "tflops" in info:
                flags = "" if info["same_bits"] else " !same"
                if "bits_as_first" in info:
                    flags += " =bits" if info["bits_as_first"] else " !=bits"
                print(
                    f"{label:32s} {name:12s} {info['tflops']:7.1f} {info['ms'] * 1e3:8.2f} us "
                    f"{entry['torch_tflops']:7.1f} {info['tflops'] / entry['torch_tflops']:6.3f} "
                    f"{info['err']:.1e}{flags}",
                    flush=True,
                )
            else:
                print(f"{label:32s} {name:12s} FAILED {info}", flush=True)
        results["rows"].append(entry)
        save()

    row("batched 64x(512x128@128x512)", 512, 128, 512, 64, list(VARIANTS))
    # torch again after ours: its figure moved 189 -> 159 between two earlier calls
    row("batched (again)", 512, 128, 512, 64, list(VARIANTS))
    row("bf16 4096^3", 4096, 4096, 4096, 0, list(VARIANTS))
    row("linear 4096x4096->11008", 4096, 4096, 11008, 0, list(VARIANTS), bt=True)
    row("bf16 8192^3", 8192, 8192, 8192, 0, list(VARIANTS))
    use("bulk")
    print(f"sweep took {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
