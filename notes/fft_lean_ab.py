"""gk.fft's long transforms under each way of splitting them into passes (fft_plan.SPLIT, switched
in this process: SPLITS=short,balanced by default) and against another source of kernels/fft.cu
(VARIANT=path; none: the installed one): device time per call of fft complex64 4096 x 4096 along
the last axis, fft complex64 2^24 and rfft float32 2^26 (and 2^21, 2^22, 2^23 and complex128
2^21, 2^22, whose pass count the short split also changes), a CUDA graph of 10 calls and eager
calls between events, the error against numpy in float64, and a digest of every output so that
two runs' bits can be compared; torch.fft on the same inputs where torch imports with CUDA. Run
from the repository root after scripts/gpu_machine.sh installed gpukit:

    PYTHONPATH=/tmp/gpukit-site python3 notes/fft_lean_ab.py
    mkdir -p /tmp/old && git show REV:kernels/fft.cu > /tmp/old/fft.cu  # (and fft_aux.cu)
    PYTHONPATH=/tmp/gpukit-site VARIANT=/tmp/old python3 notes/fft_lean_ab.py

VARIANT may also name a directory: each of its files replaces the built-in of that name (for a
variant that changes fft.cuh too). A variant of fft.cu from before fft_plan.Flow ignores the
Flow defines the installed planner passes. CASES=2^24,rfft (substrings of the labels) narrows
the cases. LONG_ROW_BYTES=16384 makes the short split take three passes for rows past 16 KiB
(2^24 as 256^3).

"""

import hashlib
import importlib
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_timing import eager_ms, graph_ms

import gpukit as gk
from gpukit.runtime import fft_plan, jit

SPLITS = os.environ.get("SPLITS", ",".join(fft_plan.SPLITS)).split(",")
for name in SPLITS:
    if name not in fft_plan.SPLITS:
        raise SystemExit(f"SPLITS: {name!r} is not one of {fft_plan.SPLITS}")
_plans = importlib.import_module("gpukit.array")._PLANS  # gpukit.array is also a function
if "LONG_ROW_BYTES" in os.environ:  # where the short split leaves two passes for three
    fft_plan.LONG_ROW_BYTES = int(os.environ["LONG_ROW_BYTES"])

variant = os.environ.get("VARIANT")
sources = dict(jit.builtin_sources())
if variant:
    path = Path(variant)
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    for f in files:
        name = f.name if path.is_dir() else "fft.cu"
        if name not in sources:
            raise SystemExit(f"VARIANT: {f} replaces no built-in kernel file ({name})")
        sources[name] = f.read_text()
    jit._SOURCES = sources
source_id = hashlib.sha1(sources["fft.cu"].encode()).hexdigest()[:10]


def digest(a) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]


def rel_err(got, want) -> float:
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


rng = np.random.default_rng(0)
cases = []
x = (rng.standard_normal((4096, 4096)) + 1j * rng.standard_normal((4096, 4096))).astype("c8")
cases.append(("fft c64 4096 x 4096, last axis", x, "fft", lambda h: np.fft.fft(h[:64], axis=-1),
              lambda o: o[:64]))  # fmt: skip
x = (rng.standard_normal(1 << 24) + 1j * rng.standard_normal(1 << 24)).astype("c8")
cases.append(("fft c64 2^24", x, "fft", np.fft.fft, lambda o: o))
x = rng.standard_normal(1 << 26).astype("f4")
cases.append(("rfft f32 2^26", x, "rfft", np.fft.rfft, lambda o: o))
for e in (21, 22, 23):
    x = (rng.standard_normal(1 << e) + 1j * rng.standard_normal(1 << e)).astype("c8")
    cases.append((f"fft c64 2^{e}", x, "fft", np.fft.fft, lambda o: o))
for e in (21, 22):  # complex128 rows reach LONG_ROW_BYTES at half the length
    x = rng.standard_normal(1 << e) + 1j * rng.standard_normal(1 << e)
    cases.append((f"fft c128 2^{e}", x, "fft", np.fft.fft, lambda o: o))
wanted = [w for w in os.environ.get("CASES", "").split(",") if w]
if wanted:
    cases = [c for c in cases if any(w in c[0] for w in wanted)]

try:
    import torch

    torch_ok = torch.cuda.is_available()
except ImportError:
    torch_ok = False


def torch_ms(fn, reps=10) -> float:
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(3):
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) / reps)
    return best


def passes(fn, n) -> str:
    """The plan's pass lengths for a length-n transform (rfft: its half-length complex one)."""
    m = n // 2 if fn == "rfft" else n
    out = []
    while m > 8192:
        n1, m = fft_plan.split(m, 8192, 8)
        out.append(n1)
    return " x ".join(map(str, [*out, m]))


print(f"variant {variant or 'installed'} (fft.cu {source_id}), backend {gk.backend()}, "
      f"splits {SPLITS}")  # fmt: skip
for label, host, fn, reference, part in cases:
    ga = gk.asarray(host)
    call = getattr(gk.fft, fn)
    want = reference(host.astype("f8" if fn == "rfft" else "c16"))
    print(f"{label}:", flush=True)
    for split in SPLITS:
        fft_plan.SPLIT = split
        _plans.clear()  # plans made under the other split
        out = call(ga).to_numpy()
        g = float("nan")  # the CPU backend (a check of this script) has no graphs
        if gk.backend() == "cuda":
            try:
                g = min(graph_ms(lambda ga=ga, call=call: [call(ga) for _ in range(10)]) / 10
                        for _ in range(3))  # fmt: skip
            except Exception as e:  # the eager time still stands
                print(f"  ({label}: no graph: {type(e).__name__}: {e})")
        dev, _ = eager_ms(lambda ga=ga, call=call: call(ga), 10)
        err = rel_err(part(out).astype("c16"), want)
        n = host.shape[-1]
        print(f"  {split:8s} ({passes(fn, n)}): graph {g:.4f} ms, eager {dev:.4f} ms, "
              f"rel err {err:.2e}, bits {digest(out)}", flush=True)  # fmt: skip
        del out
    if torch_ok:
        th = torch.from_numpy(host).cuda()
        tfn = getattr(torch.fft, fn)
        print(f"  torch: {torch_ms(lambda th=th, tfn=tfn: tfn(th)):.4f} ms", flush=True)
        del th
    del ga
