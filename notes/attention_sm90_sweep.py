"""Dev harness (GPU machine, after scripts/gpu_machine.sh has installed gpukit): the sm_90a
prefill (kernels/attention_sm90.cu) in several tile variants on bench_attention.py's prefill rows.
Every variant is first checked against torch's SDPA in float32 on the same inputs; a variant that
computes each row by the same arithmetic as an earlier one must also give the same bits as it.
Then each is timed beside torch in the same process, twice in alternation (A B A B, the better of
the two kept). Variants are swapped in by replacing the entries of the row's table of tiles and
dropping cached plans. Writes $OUT/attention_sm90_sweep.json; exits 1 if a variant failed.

usage: PYTHONPATH=/tmp/gpukit-site python3 notes/attention_sm90_sweep.py [row label substring]
"""

import dataclasses
import json
import os
import sys

import numpy as np
import torch

import gpukit as gk
import gpukit.array  # (the module, for its plan cache)
from gpukit import nn
from gpukit.runtime import kernels
from gpukit.runtime.cuda import attention_geometry

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from bench_attention import PREFILL as ROWS
from bench_attention import seconds_per_call

SDPA = torch.nn.functional.scaled_dot_product_attention


def variants(d):
    """(name, tiles, the earlier variant whose bits it must give, or None) of head dim d: the
    shipped tiles, the persistent grid, the folded exponent, and both (notes/attention.md,
    "Persistent grid"; the rescale skip measured there is gone). The 2026-11-26 sweeps' tile
    variants are in notes/runs/attention_sm90_sweep_2026-11-26.json."""
    shipped = dataclasses.replace(kernels.ATTENTION_SM90_TILES[d], persist=False, fold=False)
    return [
        ("shipped", shipped, None),
        ("persist", dataclasses.replace(shipped, persist=True), "shipped"),
        ("fold", dataclasses.replace(shipped, fold=True), None),
        ("persist+fold", dataclasses.replace(shipped, persist=True, fold=True), "fold"),
    ]


def _name(t):
    flags = f"ps{int(t.persist)}f{int(t.fold)}"
    return f"n{t.keys}s{t.stages}p{int(t.pipe)}pp{int(t.pingpong)}{flags}"


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    tables = {c: attention_geometry.sm90_table(c) for c in (False, True)}
    shipped = {c: dict(t) for c, t in tables.items()}
    plans = sys.modules["gpukit.array"]._PLANS
    rng = np.random.default_rng(1)
    results = []
    for label, dtype, b, h, s, d, causal in ROWS:
        if only not in label:
            continue
        host = [rng.standard_normal((b, h, s, d), np.float32) for _ in range(3)]
        tq, tk, tv = (torch.from_numpy(x).cuda().to(getattr(torch, dtype)) for x in host)
        ref = SDPA(tq.float(), tk.float(), tv.float(), is_causal=causal)
        fl = 4.0 * b * h * s * s * d / (2 if causal else 1)
        np_dtype = np.dtype(gk.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
        q, k, v = (gk.asarray(x.astype(np_dtype)) for x in host)
        row = {"case": label, "torch": [], "variants": {}}
        timed, bits_of = [], {}
        for name, tiles, same in variants(d):
            entry = {"tiles": _name(tiles), "tflops": []}
            row["variants"][name] = entry
            try:
                plans.clear()
                tables[causal][d] = tiles
                out = nn.scaled_dot_product_attention(q, k, v, is_causal=causal)
                bits = out.to_numpy().view(np.uint16)
                got = torch.from_numpy(bits.view(np_dtype).astype(np.float32)).cuda()
                entry["err"] = float((got - ref).norm() / ref.norm())
                bits_of[name] = bits
                if same in bits_of:
                    entry["same_bits_as"] = same
                    entry["same_bits"] = bool(np.array_equal(bits, bits_of[same]))
                    entry["bits_differing"] = int((bits != bits_of[same]).sum())
                timed.append((name, tiles))
            except Exception as e:  # a variant that fails to build or run is reported, not fatal
                entry["error"] = repr(e)[:300]
            print(label, name, {k: v for k, v in entry.items() if k != "tflops"}, flush=True)
        tables[causal].update(shipped[causal])

        def torch_step(a=(tq, tk, tv), c=causal):
            return SDPA(*a, is_causal=c)

        for _ in range(2):
            row["torch"].append(fl / seconds_per_call(torch_step, torch.cuda.synchronize) / 1e12)
            for name, tiles in timed:
                plans.clear()
                tables[causal][d] = tiles
                t = seconds_per_call(
                    lambda a=(q, k, v), c=causal: nn.scaled_dot_product_attention(*a, is_causal=c),
                    gk.synchronize,
                )
                row["variants"][name]["tflops"].append(fl / t / 1e12)
            tables[causal].update(shipped[causal])
        plans.clear()
        print(label, "torch", [round(x, 1) for x in row["torch"]], flush=True)
        for name, entry in row["variants"].items():
            print(label, name, [round(x, 1) for x in entry["tflops"]], flush=True)
        results.append(row)
        del tq, tk, tv, ref
    print("\ncase | torch | variant: best TFLOP/s (ratio to torch's best; error vs fp32[; bits])")
    failed = False
    for row in results:
        best_torch = max(row["torch"])
        cells = []
        for name, r in row["variants"].items():
            if "error" in r:
                cells.append(f"{name} ERROR {r['error'][:80]}")
                failed = True
                continue
            bits = ""
            if "same_bits" in r:
                differ = "same bits" if r["same_bits"] else f"{r['bits_differing']} differ"
                bits = f"; {differ} as {r['same_bits_as']}"
            failed |= r.get("same_bits") is False or r["err"] > 2e-2
            best = max(r["tflops"]) if r["tflops"] else float("nan")
            cells.append(f"{name} {best:.1f} ({best / best_torch:.3f}; {r['err']:.1e}{bits})")
        print(f"{row['case']} | {best_torch:.1f} | " + " | ".join(cells))
    with open(os.path.join(os.environ.get("OUT", "."), "attention_sm90_sweep.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
