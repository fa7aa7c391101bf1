"""Issue 14's kernel variants on the GPU machine, in one process: each variant patches the kernel
sources (a #define of kernels/*.cu or geometry.cuh, or a text change) and the planners' constants,
is checked against float64 torch on fresh random data (odd sizes, views, NaN, the same bits on
repeat), and is timed twice (rounds A and B, the variants interleaved) beside torch and a
device-to-device copy, through gpukit's public API. Prints a table; writes JSON to
$OUT/memory_bound_sweep.json. Run after scripts/gpu_machine.sh installed gpukit:

    PYTHONPATH=/tmp/gpukit-site python3 notes/memory_bound_sweep.py [--only cumsum,rows,ew]
"""

import argparse
import hashlib
import importlib
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

from numpy import dtype as np_dtype

import gpukit as gk
from gpukit import nn
from gpukit.runtime import jit
from gpukit.runtime.args import CONSTANTS
from gpukit.runtime.cuda import rows_geometry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _common import time_ms

try:
    import torch
except ImportError:  # --compile needs no GPU and no torch
    torch = None

BASE_SOURCES = dict(jit.builtin_sources())
BASE_CONSTANTS = dict(CONSTANTS)
PLAN_ROWS = rows_geometry.plan_rows
GK_LANES = CONSTANTS["GK_LANES"]
N = 256 * 2**20

# Streaming cache hints (.cs) on gk_ew_contig's vector loads and stores.
_CS = [
    (
        "elementwise.cu",
        "if (!IS_SCALAR) raw = reinterpret_cast<const gk_vec<T>*>(a.ptr[operand])[v];",
        "if (!IS_SCALAR) { union { uint4 w; gk_vec<T> r; } u; "
        "u.w = __ldcs(reinterpret_cast<const uint4*>(a.ptr[operand]) + v); raw = u.r; }",
    ),
    (
        "elementwise.cu",
        "if (v + u * step < nvec) vout[v + u * step] = in[u].result(a);",
        "if (v + u * step < nvec) { union { gk_vec<out_t> r; uint4 w; } u_; "
        "u_.r = in[u].result(a); __stcs(reinterpret_cast<uint4*>(vout) + v + u * step, u_.w); }",
    ),
]

VARIANTS = {
    "cumsum": [
        ("lead 128 (shipped)", {}, [], None),
        ("lead 0", {"GK_SCAN_LEAD": 0}, [], None),
        ("lead 64", {"GK_SCAN_LEAD": 64}, [], None),
        ("lead 256", {"GK_SCAN_LEAD": 256}, [], None),
        ("lead 512", {"GK_SCAN_LEAD": 512}, [], None),
    ],
    "rows": [
        ("staged (shipped)", {}, [], None),
        ("staged, write batch 2", {"GK_ROWS_STAGED_WRITE_BATCH": 2}, [], None),
        ("staged, half the threads", {}, [], 0.5),
    ],
    "ew": [
        ("U1 cap32 (shipped)", {}, [], None),
        ("U1 cap8", {"GK_EW_BLOCKS_PER_SM": 8}, [], None),
        ("U1 one-shot", {"GK_EW_BLOCKS_PER_SM": 1 << 20}, [], None),
        ("U2 cap6", {"GK_EW_UNROLL": 2, "GK_EW_BLOCKS_PER_SM": 6}, [], None),
        ("U1 cap8 .cs", {"GK_EW_BLOCKS_PER_SM": 8}, _CS, None),
    ],
}


def add_baselines(files):
    """A "baseline" variant per file given (another version of one kernel file, e.g. the previous
    commit's, to time beside this one in the same process), named as the file it replaces whole
    (nn_rows.cu, scan.cu or elementwise.cu)."""
    for path in files:
        name = os.path.basename(path)
        group = next(g for g, n in (("rows", "nn_rows.cu"), ("cumsum", "scan.cu"),
                                    ("ew", "elementwise.cu")) if n == name)  # fmt: skip
        patch = (name, BASE_SOURCES[name], Path(path).read_text())
        # A scan.cu from before the lead knows no lead: its tickets are its tiles.
        defines = {"GK_SCAN_LEAD": 0} if name == "scan.cu" else {}
        VARIANTS[group].append((f"baseline {path}", defines, [patch], None))


def apply(defines: dict, patches: list, threads_factor, compile_only=False):
    """Kernel sources and constants of a variant; every cache of plans and functions emptied."""
    sources = {}
    for name, text in BASE_SOURCES.items():
        for key, value in defines.items():
            text = re.sub(rf"(#define {key}) \S+", rf"\g<1> {value}", text)
        sources[name] = text
    for key in defines:
        assert any(f"#define {key} " in t for t in BASE_SOURCES.values()), key
    for file, old, new in patches:
        assert old in sources[file], old[:200]
        sources[file] = sources[file].replace(old, new)
    jit._SOURCES = sources
    CONSTANTS.clear()
    CONSTANTS.update(BASE_CONSTANTS)
    CONSTANTS.update({k: v for k, v in defines.items() if k in BASE_CONSTANTS})

    def plan_rows(n, n_rows, itemsize, sm_count, residual=False):
        g = PLAN_ROWS(n, n_rows, itemsize, sm_count, residual)
        t = int(g.block * (threads_factor or 1))
        if g.shared and GK_LANES <= t <= CONSTANTS["GK_ROWS_MAX_THREADS"]:
            g = g._replace(group=t, block=t)
        return g

    rows_geometry.plan_rows = plan_rows
    if compile_only:
        return
    gk.synchronize()
    rt = gk.asarray([0.0])._rt
    rt._functions.clear()
    rt._modules.clear()  # keyed by the .cu text: a change in a header alone would not show
    importlib.import_module("gpukit.array")._PLANS.clear()
    importlib.import_module("gpukit.elementwise")._ENTRIES.clear()
    norm = importlib.import_module("gpukit.nn.normalization")
    norm._ENTRIES.clear()
    norm._SEEN.clear()


def t_gk(fn):
    return time_ms(fn, lambda: gk.Event().record(), lambda a, b: a.elapsed_ms(b), gk.synchronize,
                   reps=10, rounds=5)  # fmt: skip


def t_torch(fn):
    def record():
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    return time_ms(fn, record, lambda a, b: a.elapsed_time(b), torch.cuda.synchronize,
                   reps=10, rounds=5)  # fmt: skip


def tt(a):
    """A gpukit result as a torch tensor (after the work that made it)."""
    gk.synchronize()
    return torch.from_dlpack(a)


def close(got, ref, tol, scale=None, what=""):
    """|got - ref| <= tol * (scale or |ref|) + tol, NaN where ref has NaN."""
    got, ref = got.double(), ref.double()
    nan = torch.isnan(ref)
    if not torch.equal(torch.isnan(got), nan):
        raise AssertionError(f"{what}: NaN where the reference has none, or the reverse")
    scale = ref.abs() if scale is None else scale
    same = got == ref  # infinities
    err = torch.where(nan | same, torch.zeros_like(ref), (got - ref).abs() - tol * scale - tol)
    if err.numel() and err.max() > 0:
        i = int(err.argmax())
        raise AssertionError(f"{what}: off at {i}: {float(got[i])} vs {float(ref[i])}")


def same_bits(fn, reps=3, what=""):
    first = tt(fn()).clone()
    for _ in range(reps - 1):
        if not torch.equal(tt(fn()).view(torch.uint8), first.view(torch.uint8)):
            raise AssertionError(f"{what}: different bits on a repeat")


def compile_all(groups):
    """Every variant's kernels compiled for sm_90 with NVRTC (no GPU needed)."""
    from gpukit.base.dtypes import bfloat16
    from gpukit.runtime import kernels

    f32, f64 = np_dtype("float32"), np_dtype("float64")
    instances = {
        "cumsum": [kernels.cumsum(f32, f32), kernels.cumsum(f64, f64)],
        "rows": [kernels.nn_rows(f32), kernels.nn_rows(bfloat16)],
        "ew": [
            kernels.elementwise("exp", f32, f32, (f32,)),
            kernels.elementwise("gelu", bfloat16, bfloat16, (bfloat16,)),
            kernels.elementwise("add", f32, f32, (f32, f32)),
        ],
    }
    j = jit.Jit(jit.open_compiler("nvrtc")[0], ["--gpu-architecture=sm_90"])
    for group in groups:
        for name, defines, patches, factor in VARIANTS[group]:
            apply(defines, patches, factor, compile_only=True)
            for file, defs in instances[group]:
                j.build_builtin(file, defs)
            print(f"compiled {group} {name}")


# --- checks ---------------------------------------------------------------------------------------
def check_cumsum(full):
    """full: float64, int32 and NaN too (the shipped variant)."""
    for n in (1, 31, 1025, 12289, 2**20 + 3, 2**24 + 5):
        x = torch.randn(n + 1, device="cuda")
        for view in (x[:n], x[1:], x[::3]):
            ref = view.double().cumsum(0)
            close(tt(gk.cumsum(gk.from_dlpack(view))), ref, 2e-6,
                  view.double().abs().cumsum(0), f"cumsum n={view.numel()}")  # fmt: skip
    m = torch.randn(37, 50001, device="cuda")
    close(tt(gk.cumsum(gk.from_dlpack(m), axis=1)), m.double().cumsum(1), 2e-6,
          m.double().abs().cumsum(1), "cumsum rows")  # fmt: skip
    x = torch.randn(2**24, device="cuda")
    x[2**22] = float("nan")
    got = tt(gk.cumsum(gk.from_dlpack(x)))
    if not (torch.isnan(got[2**22 :]).all() and torch.isfinite(got[: 2**22]).all()):
        raise AssertionError("cumsum: NaN does not propagate to the end (only)")
    gen = torch.Generator(device="cuda").manual_seed(7)  # the same input in every variant
    g = gk.from_dlpack(torch.randn(2**26, device="cuda", generator=gen))
    same_bits(lambda: gk.cumsum(g), what="cumsum 64M")
    digest = hashlib.sha1(tt(gk.cumsum(g)).cpu().numpy().tobytes()).hexdigest()[:12]
    if not full:
        return digest
    d = torch.randn(2**20 + 3, device="cuda", dtype=torch.float64)
    close(tt(gk.cumsum(gk.from_dlpack(d))), d.cumsum(0), 1e-13, d.abs().cumsum(0), "f64")
    i = torch.randint(-1000, 1000, (2**20 + 3,), device="cuda", dtype=torch.int32)
    if not torch.equal(tt(gk.cumsum(gk.from_dlpack(i))), i.long().cumsum(0)):
        raise AssertionError("cumsum int32 -> int64 differs")
    return digest


def check_rows(inputs):
    for name, (fn, ref, tol) in inputs.items():
        close(tt(fn()[0] if "residual" in name else fn()), ref, tol, None, name)
        same_bits(lambda fn=fn, name=name: fn()[0] if "residual" in name else fn(),
                  what=name)  # fmt: skip


def check_ew(inputs):
    for name, (fn, ref, tol) in inputs.items():
        close(tt(fn()), ref, tol, None, name)


# --- main -----------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="cumsum,rows,ew")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--compile", action="store_true", help="compile every variant, run nothing")
    ap.add_argument("--baseline", action="append", default=[], help="a kernel file to time beside")
    args = ap.parse_args()
    add_baselines(args.baseline)
    groups = args.only.split(",")
    if args.compile:
        compile_all(groups)
        return
    torch.manual_seed(0)
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    dst = torch.empty_like(x)
    copy_gbs = 2 * N * 4 / t_torch(lambda: dst.copy_(x)) / 1e6
    gx, gy = gk.from_dlpack(x), gk.from_dlpack(y)
    F = torch.nn.functional

    s = x[: 4096 * 16384].view(4096, 16384)
    gs = gk.from_dlpack(s)
    h = torch.randn(16384, 4096, device="cuda").to(torch.bfloat16)
    r = torch.randn(16384, 4096, device="cuda").to(torch.bfloat16)
    w = (1 + 0.1 * torch.randn(4096, device="cuda")).to(torch.bfloat16)
    b = torch.randn(4096, device="cuda").to(torch.bfloat16)
    gh, gr, gw, gb = (gk.from_dlpack(t) for t in (h, r, w, b))
    nb = 2 * h.numel() * 2
    h64 = (h.float() + r.float()).to(torch.bfloat16).double()
    work = {
        "cumsum": {
            "cumsum f32 256M": (2 * N * 4, lambda: gk.cumsum(gx), lambda: x.cumsum(0)),
            "cumsum f32 4096x65536 axis=1": (
                2 * N * 4,
                lambda: gk.cumsum(gx.reshape(4096, 65536), axis=1),
                lambda: x.view(4096, 65536).cumsum(1),
            ),
        },
        "rows": {
            "softmax f32 4096x16384": (
                2 * s.numel() * 4,
                lambda: nn.softmax(gs),
                lambda: torch.softmax(s, -1),
            ),
            "log_softmax f32 4096x16384": (
                2 * s.numel() * 4,
                lambda: nn.log_softmax(gs),
                lambda: torch.log_softmax(s, -1),
            ),
            "layer_norm bf16 16384x4096": (
                nb,
                lambda: nn.layer_norm(gh, gw, gb),
                lambda: F.layer_norm(h, (4096,), w, b),
            ),
            "rms_norm bf16 16384x4096": (
                nb,
                lambda: nn.rms_norm(gh, gw, 1e-6),
                lambda: F.rms_norm(h, (4096,), w, 1e-6),
            ),
            "rms_norm(residual=) bf16": (
                2 * nb,
                lambda: nn.rms_norm(gh, gw, 1e-6, residual=gr),
                lambda: (F.rms_norm(h + r, (4096,), w, 1e-6), None),
            ),
        },
        "ew": {
            "gelu bf16 64M": (
                2 * 64 * 2**20 * 2,
                lambda: nn.gelu(gk.from_dlpack(h.view(-1)[: 64 * 2**20])),
                lambda: F.gelu(h.view(-1)[: 64 * 2**20]),
            ),
            "exp f32 256M": (2 * N * 4, lambda: gk.exp(gx), lambda: x.exp()),
            "add f32 256M": (3 * N * 4, lambda: gx + gy, lambda: x + y),
        },
    }
    rows_ref = {
        "softmax f32 4096x16384": (lambda: nn.softmax(gs), torch.softmax(s.double(), -1), 2e-6),
        "log_softmax f32 4096x16384": (
            lambda: nn.log_softmax(gs), torch.log_softmax(s.double(), -1), 2e-6),
        "layer_norm bf16 16384x4096": (
            lambda: nn.layer_norm(gh, gw, gb),
            F.layer_norm(h.double(), (4096,), w.double(), b.double()), 1e-2),
        "rms_norm bf16 16384x4096": (
            lambda: nn.rms_norm(gh, gw, 1e-6),
            F.rms_norm(h.double(), (4096,), w.double(), 1e-6), 1e-2),
        "rms_norm(residual=) bf16": (
            lambda: nn.rms_norm(gh, gw, 1e-6, residual=gr),
            F.rms_norm(h64, (4096,), w.double(), 1e-6), 1e-2),
    }  # fmt: skip
    g16 = h.view(-1)[: 64 * 2**20]
    ew_ref = {
        "gelu bf16 64M": (lambda: nn.gelu(gk.from_dlpack(g16)), F.gelu(g16.double()), 1e-2),
        "exp f32 256M": (lambda: gk.exp(gx), x.double().exp(), 5e-7),
        "add f32 256M": (lambda: gx + gy, x.double() + y.double(), 2e-7),
    }
    checks = {"cumsum": check_cumsum, "rows": lambda full: check_rows(rows_ref),
              "ew": lambda full: check_ew(ew_ref)}  # fmt: skip
    results = []
    torch_ms = {}
    failed = set()
    for rnd in ("A", "B"):
        for group in groups:
            for name, defines, patches, factor in VARIANTS[group]:
                if (group, name) in failed:
                    continue
                rec = {"group": group, "variant": name, "round": rnd}
                try:
                    apply(defines, patches, factor)
                    start = time.time()
                    if rnd == "A":
                        digest = checks[group](name.endswith("(shipped)"))
                        rec["check"] = f"passed {digest}" if digest else "passed"
                    for work_name, (nbytes, ours, theirs) in work[group].items():
                        ms = t_gk(ours)
                        key = (rnd, work_name)
                        if key not in torch_ms:
                            torch_ms[key] = t_torch(theirs)
                        gbs, tgbs = nbytes / ms / 1e6, nbytes / torch_ms[key] / 1e6
                        rec[work_name] = {"gbs": gbs, "torch_gbs": tgbs}
                    rec["seconds"] = time.time() - start
                except Exception as e:  # a failed variant is reported, the sweep goes on
                    rec["error"] = f"{type(e).__name__}: {e}"
                    failed.add((group, name))
                    traceback.print_exc()
                results.append(rec)
                print_rec(rec, copy_gbs)
                sys.stdout.flush()
                with open(os.path.join(args.out, "memory_bound_sweep.json"), "w") as f:
                    json.dump({"copy_gbs": copy_gbs, "device": torch.cuda.get_device_name(),
                               "results": results}, f, indent=1)  # fmt: skip
    apply({}, [], None)
    again = 2 * N * 4 / t_torch(lambda: dst.copy_(x)) / 1e6
    print(f"\ncopy {copy_gbs:.0f} GB/s (at the end: {again:.0f}); GB/s gpukit, torch, ratio, "
          "share of copy")  # fmt: skip
    for rec in results:
        print_rec(rec, copy_gbs)


def print_rec(rec, copy_gbs):
    head = f"{rec['round']} {rec['group']:6s} {rec['variant']:26s}"
    if "error" in rec:
        print(f"{head} {rec['error']}")
        return
    for key, v in rec.items():
        if isinstance(v, dict):
            g, t = v["gbs"], v["torch_gbs"]
            print(f"{head} {key:30s} {g:7.0f} {t:7.0f} {g / t:6.3f} {100 * g / copy_gbs:5.1f}%"
                  f" {rec.get('check', '')}")  # fmt: skip


if __name__ == "__main__":
    main()
