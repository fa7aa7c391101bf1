"""SafeTensors loading (issue 6), in one run: a 2 GB file read from the page cache into device
memory by gpukit.load_safetensors, by safetensors.torch.load_file(device="cuda"), and the pinned
host-to-device limit (a pinned torch tensor of the same size, .cuda(non_blocking=True)). Best of 3,
in GB/s (1e9 bytes). Target: gpukit >= 20 GB/s.

GPUKIT_BENCH_SAFETENSORS_GB changes the file size (for a quick run on a small machine).
"""

import os
import time

import numpy as np
from _common import print_table, write_rows

import gpukit as gk
from gpukit.runtime import devices

GB = 10**9
TENSOR_BYTES = 32 << 20  # 32 MiB tensors, about the size of a 1B model's larger weights


def make_file(path: str, nbytes: int) -> int:
    """Writes (once) a file of float16 tensors holding about `nbytes` bytes; returns the data's
    bytes."""
    count = max(1, nbytes // TENSOR_BYTES)
    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        block = rng.integers(0, 256, TENSOR_BYTES, dtype=np.uint8).view(np.float16)
        tensors = {f"layers.{i}.weight": block.reshape(4096, -1) for i in range(count)}
        gk.save_safetensors(tensors, path + ".partial")
        os.replace(path + ".partial", path)
    return count * TENSOR_BYTES


def warm_page_cache(path: str) -> None:
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(64 << 20)
        while f.readinto(buf):
            pass


def best_seconds(load, sync, repeats=3) -> float:
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        result = load()
        sync()
        best = min(best, time.perf_counter() - start)
        del result
    return best


def main():
    print(gk.info())
    size = int(float(os.environ.get("GPUKIT_BENCH_SAFETENSORS_GB", "2")) * GB)
    path = f"/tmp/gpukit_bench_{size // 10**6}MB.safetensors"
    nbytes = make_file(path, size)
    warm_page_cache(path)
    backend = devices.runtime().name
    print(f"file: {path}, {nbytes / GB:.2f} GB of data, from the page cache")

    loaded = gk.load_safetensors(path, progress=False)  # first load: staging buffers, streams
    first = loaded["layers.0.weight"].to_numpy()
    del loaded
    ours = (
        nbytes
        / GB
        / best_seconds(lambda: gk.load_safetensors(path, progress=False), gk.synchronize)
    )
    print(f"gpukit.load_safetensors: {ours:.1f} GB/s")

    reference = limit = None
    try:
        import torch

        if not torch.cuda.is_available() or backend != "cuda":
            raise RuntimeError("torch sees no GPU or gpukit is not on cuda")
        from safetensors.torch import load_file

        check = load_file(path, device="cuda")
        same = np.array_equal(
            check["layers.0.weight"].cpu().view(torch.int16).numpy(), first.view(np.int16)
        )
        print(f"gpukit and safetensors.torch load the same bytes: {same}")
        del check
        sync = torch.cuda.synchronize
        reference = nbytes / GB / best_seconds(lambda: load_file(path, device="cuda"), sync)
        pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        pinned.cuda(non_blocking=True)  # warm the caching allocator
        limit = nbytes / GB / best_seconds(lambda: pinned.cuda(non_blocking=True), sync)
    except Exception as e:  # torch and safetensors are only there to compare against
        print("torch / safetensors.torch unavailable:", e)

    rows = [
        (f"load {nbytes / GB:.1f} GB file -> {backend} (GB/s)", ours, reference, None),
        ("  pinned host -> device limit (GB/s)", None, limit, None),
    ]
    print_table(backend, rows)
    write_rows("bench_safetensors", backend, rows)
    print("(torch column: safetensors.torch.load_file(device='cuda'), and torch's pinned copy)")
    if limit:
        print(f"gpukit reaches {100 * ours / limit:.0f}% of the pinned limit (target: 20 GB/s)")


if __name__ == "__main__":
    main()
