"""Dev harness (GPU machine, after scripts/gpu_machine.sh has installed gpukit): variants of the
sm_90a GEMM (kernels/gemm_sm90.cu) on bench_matmul's rows, each checked first (output poisoned,
against float64 on the host for the small checks and against torch's float32 product of the same
operands for the timed shapes; run twice for the same bits), then timed beside torch in the same
process. Variants are swapped in by wrapping kernels.gemm_sm90 (extra defines), the source of
gemm_sm90.cu (OLD: the kernel before the staged epilogue, given as a file path) and
gemm_plan.choose_sm90_tile (a forced tile), dropping cached plans between variants. Writes
$OUT/gemm_sweep.json and prints a table.

usage: PYTHONPATH=/tmp/gpukit-site [OLD=old_gemm_sm90.cu] python3 notes/gemm_sweep.py
"""

import json
import math
import os
import sys
import time

import numpy as np
import torch

import gpukit as gk
import gpukit.array  # (the module, for its plan cache)
from gpukit.runtime import kernels
from gpukit.runtime.cuda import gemm_plan

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from bench_matmul import gk_ms, torch_ms

F = torch.nn.functional
T128, T64 = ({"tile": (128, n, 1)} for n in (128, 64))
_gemm_sm90, _source, _choose = kernels.gemm_sm90, kernels.source, gemm_plan.choose_sm90_tile
OLD_PATH = os.environ.get("OLD")
OLD_SRC = None
if OLD_PATH:
    # The old kernel read args.cuh's out_pairs, which the staged epilogue no longer needs: the same
    # condition the host computed for it.
    with open(OLD_PATH) as f:
        OLD_SRC = f.read().replace(
            "p.out_pairs", "((p.n & 1) == 0 && (p.batch == 1 || (p.so_z & 1) == 0))"
        )


def use(variant):
    """variant: dict(old=bool, unroll=int|None, tile=(bm, bn, splits)|None)."""
    extra = []
    if variant.get("old"):
        extra.append("GK_SWEEP_OLD=1")
    if variant.get("unroll"):
        extra.append(f"GK_GEMM_EPI_UNROLL={variant['unroll']}")

    def gemm_sm90(*a, **k):
        file, defines = _gemm_sm90(*a, **k)
        return file, (*defines, *extra)

    def source(file, defines, sources):
        if "GK_SWEEP_OLD=1" in defines:
            return OLD_SRC
        return _source(file, defines, sources)

    kernels.gemm_sm90, kernels.source = gemm_sm90, source
    tile = variant.get("tile")
    gemm_plan.choose_sm90_tile = (lambda *a: tile) if tile else _choose
    sys.modules["gpukit.array"]._PLANS.clear()


def name_of(v):
    parts = ["old" if v.get("old") else "new"]
    if v.get("unroll"):
        parts.append(f"u{v['unroll']}")
    if v.get("tile"):
        parts.append(
            "x".join(map(str, v["tile"][:2])) + (f"s{v['tile'][2]}" if v["tile"][2] > 1 else "")
        )
    return "-".join(parts)


def poison(nbytes):
    p = gk.full((max(nbytes // 2, 1),), np.nan, gk.bfloat16)
    del p


def rel(got, ref):
    got = np.asarray(got).astype(np.float64)
    if not np.isfinite(got).all():
        return float("nan")
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))


def host(rng, shape, dtype=gk.bfloat16):
    return rng.standard_normal(shape, np.float32).astype(dtype)


def gelu64(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def small_cases(rng):
    """Small products with their float64 references (host): odd widths with a misaligned residual,
    split K, a batch. Each case: (step, reference, output bytes)."""
    f64 = np.float64
    hx, hw = host(rng, (1000, 264)), host(rng, (1001, 264))
    hb, hr = host(rng, (1001,)), host(rng, (1000, 1002))
    x, w, b = gk.asarray(hx), gk.asarray(hw), gk.asarray(hb)
    r = gk.asarray(hr)[:, 1:]  # starts 2 bytes in: no vector loads
    ha, hb2 = host(rng, (257, 4104)), host(rng, (4104, 520))
    a2, b2 = gk.asarray(ha), gk.asarray(hb2)
    ha3, hb3 = host(rng, (8, 512, 128)), host(rng, (8, 128, 520))
    a3, b3 = gk.asarray(ha3), gk.asarray(hb3)
    return {
        "linear 1000x264->1001 bias gelu residual": (
            lambda: gk.linear(x, w, b, "gelu", r),
            gelu64(hx.astype(f64) @ hw.astype(f64).T + hb) + hr[:, 1:].astype(f64),
            1000 * 1001 * 2,
        ),
        "257x4104 @ 4104x520 (split K)": (
            lambda: a2 @ b2,
            ha.astype(f64) @ hb2.astype(f64),
            257 * 520 * 2,
        ),
        "batched 8x(512x128 @ 128x520)": (
            lambda: a3 @ b3,
            np.matmul(ha3.astype(f64), hb3.astype(f64)),
            8 * 512 * 520 * 2,
        ),
    }


def small_checks(cases):
    """{case: (relative error against float64, same bits on a second run)}."""
    out = {}
    for label, (f, ref, nbytes) in cases.items():
        poison(nbytes)
        first = f().to_numpy()
        again = f().to_numpy()
        out[label] = (rel(first, ref), bool(np.array_equal(first, again, equal_nan=True)))
    return out


def line(row, name, info, torch_tflops):
    if "error" in info:
        return f"{row:40s} {name:14s} ERROR {info['error'][:150]}"
    err = f"{info['err']:.2e}" if "err" in info else ""
    flags = "" if info.get("finite", True) and info.get("same_bits", True) else " BAD"
    if "bits_as_first" in info:
        flags += " =bits" if info["bits_as_first"] else " !=bits"
    return (
        f"{row:40s} {name:14s} {info['tflops']:7.1f} {info['ms'] * 1e3:8.1f} us "
        f"{torch_tflops:7.1f} {info['tflops'] / torch_tflops:6.3f} {err}{flags}"
    )


def main():
    out_dir = os.environ.get("OUT", ".")
    rng = np.random.default_rng(3)
    torch.backends.cuda.matmul.allow_tf32 = False
    results = {"device": gk.info().get("device"), "checks": {}, "rows": []}
    t_start = time.time()

    def save():
        with open(os.path.join(out_dir, "gemm_sweep.json"), "w") as f:
            json.dump(results, f, indent=1, default=str)

    old = [{"old": True}] if OLD_SRC else []
    cases = small_cases(rng)
    for v in [{}, *old, {"unroll": 4}, T128, T64]:
        use(v)
        try:
            results["checks"][name_of(v)] = small_checks(cases)
        except Exception as e:  # a variant that fails to build or run is reported, not fatal
            results["checks"][name_of(v)] = {"error": repr(e)[:300]}
        print(f"check {name_of(v)}: {results['checks'][name_of(v)]}", flush=True)
    save()
    print(f"\n{'row':40s} {'variant':14s} TFLOP/s {'time':>11s} {'torch':>7s} {'ratio':>6s} err")

    def row(label, flops, make_gk, make_torch, variants, torch_ref=None):
        entry = {"row": label, "variants": {}}
        entry["torch_ms"] = torch_ms(torch, make_torch())
        entry["torch_tflops"] = flops / entry["torch_ms"] / 1e9
        ref = torch_ref() if torch_ref else None
        first = None
        for v in variants:
            use(v)
            name = name_of(v)
            info = {}
            try:
                step = make_gk()
                if ref is not None:
                    poison(ref.numel() * 2)
                    got = step()
                    bits = got.to_numpy()
                    g = torch.from_numpy(bits.astype(np.float32)).cuda()
                    info["err"] = float((g - ref).norm() / ref.norm())
                    info["finite"] = bool(torch.isfinite(g).all())
                    info["same_bits"] = bool(np.array_equal(bits, step().to_numpy()))
                    if first is None:
                        first = bits
                    else:  # the same bits as the first variant (another tile or form)
                        info["bits_as_first"] = bool(np.array_equal(bits, first))
                info["ms"] = gk_ms(step)
                info["tflops"] = flops / info["ms"] / 1e9
            except Exception as e:
                info = {"error": repr(e)[:300]}
            entry["variants"][name] = info
            print(line(label, name, info, entry["torch_tflops"]), flush=True)
        results["rows"].append(entry)
        save()

    # linear 4096x4096 -> 11008 bf16 with each epilogue
    hx, hw = host(rng, (4096, 4096)), host(rng, (11008, 4096))
    hb, hr = host(rng, (11008,)), host(rng, (4096, 11008))
    x, w, b, r = (gk.asarray(v) for v in (hx, hw, hb, hr))
    tx, tw, tb, tr = (
        torch.from_numpy(v.astype(np.float32)).cuda().bfloat16() for v in (hx, hw, hb, hr)
    )
    lin_flops = 2 * 4096 * 4096 * 11008
    plain_ref = F.linear(tx.float(), tw.float())
    epilogues = {
        "plain": ((), lambda: F.linear(tx, tw), lambda: plain_ref),
        "bias_gelu": (
            (b, "gelu"),
            lambda: F.gelu(F.linear(tx, tw, tb)),
            lambda: F.gelu(plain_ref + tb.float()),
        ),
        "bias": ((b,), lambda: F.linear(tx, tw, tb), lambda: plain_ref + tb.float()),
        "gelu": ((None, "gelu"), lambda: F.gelu(F.linear(tx, tw)), lambda: F.gelu(plain_ref)),
        "silu": ((None, "silu"), lambda: F.silu(F.linear(tx, tw)), lambda: F.silu(plain_ref)),
        "residual": (
            (None, None, r),
            lambda: F.linear(tx, tw) + tr,
            lambda: plain_ref + tr.float(),
        ),
    }
    for label, (extra, tstep, tref) in epilogues.items():
        variants = [{}, T128]
        if label in ("plain", "bias_gelu"):
            variants += [{"unroll": 4}, *old]
        row(
            f"linear 4096x4096->11008 {label}",
            lin_flops,
            lambda extra=extra: lambda: gk.linear(x, w, *extra),
            lambda tstep=tstep: tstep,
            variants,
            tref,
        )

    def square(label, m, k, n, batch, variants, check=True):
        shape_a, shape_b = ((batch, m, k), (batch, k, n)) if batch else ((m, k), (k, n))
        ha, hb = host(rng, shape_a), host(rng, shape_b)
        a, bb = gk.asarray(ha), gk.asarray(hb)
        ta, tb2 = (torch.from_numpy(v.astype(np.float32)).cuda().bfloat16() for v in (ha, hb))
        row(
            label,
            2 * m * k * n * max(batch, 1),
            lambda: lambda: a @ bb,
            lambda: lambda: ta @ tb2,
            variants,
            (lambda: ta.float() @ tb2.float()) if check else None,
        )

    square("bf16 4096^3", 4096, 4096, 4096, 0, [{}, T128])
    square("bf16 2048^3", 2048, 2048, 2048, 0, [{}, T128])
    square("batched 64x(512x128@128x512)", 512, 128, 512, 64, [{}, T128, T64])
    square("bf16 8192^3", 8192, 8192, 8192, 0, [{}, T128], check=False)
    use({})
    print(f"sweep took {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
