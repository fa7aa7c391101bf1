"""gk.fft against another source of kernels/fft.cu (VARIANT=path; none: the installed one), each in
its own process: device time per call of fft complex64 4096 x 4096 along the last axis, fft
complex64 2^24 and rfft float32 2^26 (a CUDA graph of 10 calls, and eager calls between events),
the error against numpy in float64, and a digest of every output so that two runs' bits can be
compared; torch.fft on the same inputs where torch imports with CUDA. Run from the repository
root after scripts/gpu_machine.sh installed gpukit:

    git show main:kernels/fft.cu > /tmp/fft_main.cu
    PYTHONPATH=/tmp/gpukit-site python3 notes/fft_lean_ab.py
    PYTHONPATH=/tmp/gpukit-site VARIANT=/tmp/fft_main.cu python3 notes/fft_lean_ab.py

VARIANT may also name a directory: each of its files replaces the built-in of that name (for a
variant that changes fft.cuh too). A variant of fft.cu from before fft_plan.Flow ignores the
Flow defines the installed planner passes."""

import hashlib
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_timing import eager_ms, graph_ms

import gpukit as gk
from gpukit.runtime import jit

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


print(f"variant {variant or 'installed'} (fft.cu {source_id}), backend {gk.backend()}")
for label, host, fn, reference, part in cases:
    ga = gk.asarray(host)
    call = getattr(gk.fft, fn)
    out = call(ga).to_numpy()
    g = float("nan")  # the CPU backend (a check of this script) has no graphs
    if gk.backend() == "cuda":
        try:
            g = min(graph_ms(lambda ga=ga, call=call: [call(ga) for _ in range(10)]) / 10
                    for _ in range(3))  # fmt: skip
        except Exception as e:  # the eager time still stands
            print(f"  ({label}: no graph: {type(e).__name__}: {e})")
    dev, _ = eager_ms(lambda ga=ga, call=call: call(ga), 10)
    err = rel_err(part(out).astype("c16"), reference(host.astype("f8" if fn == "rfft" else "c16")))
    line = (f"  {label}: graph {g:.4f} ms, eager {dev:.4f} ms, rel err {err:.2e}, "
            f"bits {digest(out)}")  # fmt: skip
    if torch_ok:
        th = torch.from_numpy(host).cuda()
        tfn = getattr(torch.fft, fn)
        line += f"; torch {torch_ms(lambda th=th, tfn=tfn: tfn(th)):.4f} ms"
        del th
    print(line, flush=True)
    del ga
