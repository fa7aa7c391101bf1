"""FFTs (issue 20) beside torch.fft and cupy.fft (cuFFT) in the same run, with the device-to-device
copy bandwidth measured in that run as the memory limit:

- complex64 1-D of 2^24 (gk.fft.fft / torch.fft.fft / cupy.fft.fft);
- complex64 batched 4096 x 4096 along the last axis;
- rfft of 2^26 float32.

The floor of each is its input read and output written once at the measured copy bandwidth
(runtime/fft_plan.memory_bytes). Each figure is the median of 3 rounds of the mean time of 10
back-to-back calls between events; the inputs are shared through DLPack, so all three read the
same memory. Prints a table (ms, GB/s by the floor's bytes, the floor, the ratio to cuFFT) and
writes JSON (--json, default bench_fft.json in $OUT or the working directory). Needs the CUDA
backend and torch; cupy is optional.
"""

import argparse

from _common import json_path, print_table, time_ms, write_json

import gpukit as gk
from gpukit.runtime import fft_plan, runtime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=json_path("bench_fft"))
    args = ap.parse_args()
    if gk.backend() != "cuda":
        raise SystemExit(f"bench_fft needs the cuda backend (found {gk.backend()})")
    import torch

    try:
        import cupy as cp
    except ImportError:
        cp = None
    print(gk.info())

    def gk_event():
        e = gk.Event()
        e.record()
        return e

    def torch_event():
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    gk_time = lambda f: time_ms(f, gk_event, lambda a, b: a.elapsed_ms(b), gk.synchronize)  # noqa: E731
    torch_time = lambda f: time_ms(  # noqa: E731
        f, torch_event, lambda a, b: a.elapsed_time(b), torch.cuda.synchronize
    )

    def cupy_time(f):
        def record():
            e = cp.cuda.Event()
            e.record()
            return e

        return time_ms(f, record, lambda a, b: cp.cuda.get_elapsed_time(a, b),
                       cp.cuda.Device().synchronize)  # fmt: skip

    g = torch.Generator(device="cuda").manual_seed(0)
    cases = []
    x1 = torch.randn(1 << 24, dtype=torch.complex64, device="cuda", generator=g)
    cases.append(("fft c64 2^24", x1, "fft", 1 << 24, 1, 8, 8))
    x2 = torch.randn(4096, 4096, dtype=torch.complex64, device="cuda", generator=g)
    cases.append(("fft c64 4096 x 4096 (last axis)", x2, "fft", 4096, 4096, 8, 8))
    x3 = torch.randn(1 << 26, dtype=torch.float32, device="cuda", generator=g)
    cases.append(("rfft f32 2^26", x3, "rfft", 1 << 26, 1, 4, 8))

    big = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    gbig = gk.from_dlpack(big)
    copy_ms = gk_time(lambda: gbig.copy())
    copy_gbps = 2 * big.numel() * 4 / copy_ms / 1e6
    rows, records = [], []
    for name, x, fn, n, batch, in_item, out_item in cases:
        gx = gk.from_dlpack(x)
        ours = gk_time(lambda: getattr(gk.fft, fn)(gx))  # noqa: B023
        theirs = torch_time(lambda: getattr(torch.fft, fn)(x))  # noqa: B023
        cupy_ms = None
        if cp is not None:
            cx = cp.from_dlpack(x)
            cupy_ms = cupy_time(lambda: getattr(cp.fft, fn)(cx))  # noqa: B023
        out_n = n // 2 + 1 if fn == "rfft" else n
        nbytes = (n * in_item + out_n * out_item) * batch
        floor_ms = nbytes / copy_gbps / 1e6
        shared = runtime().device.max_shared_per_block_optin
        limit = fft_plan.max_block_length(8, shared)
        passes = fft_plan.passes(n // 2 if fn == "rfft" else n, limit)
        rows.append((f"{name} (ms)", ours, theirs, cupy_ms))
        records.append({
            "work": name, "gpukit_ms": ours, "torch_ms": theirs, "cupy_ms": cupy_ms,
            "floor_ms": floor_ms, "floor_bytes": nbytes, "gpukit_GBps": nbytes / ours / 1e6,
            "vs_cufft": theirs / ours, "passes": passes,
            "gflops": fft_plan.flops(n, batch) / ours / 1e6,
        })  # fmt: skip
    print_table(gk.backend(), rows)
    print(f"\ncopy bandwidth {copy_gbps:.0f} GB/s (read + write); floors at that bandwidth")
    print(f"{'work':34s} {'floor ms':>9s} {'GB/s':>7s} {'x torch':>8s} {'passes':>6s}")
    for r in records:
        print(f"{r['work']:34s} {r['floor_ms']:9.3f} {r['gpukit_GBps']:7.0f} "
              f"{r['vs_cufft']:8.2f} {r['passes']:6d}")  # fmt: skip
    write_json(args.json, {"info": gk.info(), "copy_GBps": copy_gbps, "rows": records})


if __name__ == "__main__":
    main()
