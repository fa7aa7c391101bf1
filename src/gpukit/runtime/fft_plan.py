"""How an FFT of length n runs on the GPU (kernels/fft.cu, fft_aux.cu), in plain Python: the
radices of a length that one block transforms in shared memory, the block's geometry, how a
longer length splits into passes (four-step: column transforms, twiddle, row transforms), and
when Bluestein's chirp-z transform takes over (a prime factor above 13)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .args import CONSTANTS

ODD_RADICES = (3, 5, 7, 11, 13)
# Largest length one block transforms, by bytes per complex value: 64 KiB of shared memory a row
# (less where the device's shared memory per block cannot hold that row and its twiddle table).
ROW_BYTES = 64 * 1024
# Shared memory a block of contiguous rows takes / of strided rows (columns: several rows side by
# side make each global access cover a 32-byte sector or more), twiddle table included, unless
# a single row needs more.
ROWS_SHARED = 48 * 1024
COLUMNS_SHARED = 224 * 1024
MAX_COLUMNS = 16
MIN_THREADS = 128  # short rows: several per block
ROW_EXTRA = CONSTANTS["GK_FFT_ROW_EXTRA_BYTES"]
PAD_SHIFT = CONSTANTS["GK_FFT_PAD_SHIFT"]


def pitch(n: int) -> int:
    """Elements a row of n takes in shared memory (kernels/fft.cu pads it against bank
    conflicts)."""
    return n + (n >> PAD_SHIFT) + 1


def factors(n: int) -> dict[int, int]:
    """Prime factorization {p: exponent}."""
    out, p = {}, 2
    while p * p <= n:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    if n > 1:
        out[n] = out.get(n, 0) + 1
    return out


def is_smooth(n: int) -> bool:
    """Whether every prime factor of n has a butterfly (2, 3, 5, 7, 11, 13)."""
    return all(p == 2 or p in ODD_RADICES for p in factors(n))


def max_block_length(itemsize: int, shared_limit: int = 227 * 1024) -> int:
    """The longest row one block transforms within `shared_limit` bytes of shared memory (the
    device's opt-in limit): 8192 complex64, 4096 complex128 values on an H100."""
    n = ROW_BYTES // itemsize
    while n > 256 and block(n, itemsize, False, 1).shared > shared_limit:
        n //= 2
    return n


def radices(n: int) -> tuple[int, ...]:
    """The passes of a smooth length: powers of two in radix-16 passes (the rest as one radix of
    8, 4 or 2), then each odd prime factor; (1,) for n = 1."""
    if n == 1:
        return (1,)
    f = factors(n)
    twos = f.pop(2, 0)
    out = [16] * (twos // 4) + ([1 << (twos % 4)] if twos % 4 else [])
    for p in sorted(f, reverse=True):
        out += [p] * f[p]
    return tuple(out)


def max_threads(rs, itemsize: int) -> int:
    """Threads a block may have before its butterflies' registers would spill (measured in the
    SASS of NVRTC 13 for sm_90: radix 16 takes about 55 registers a thread in float, 115 in
    double; radices 11 and 13 up to 180)."""
    if any(r in (11, 13) for r in rs):
        return 256
    return (
        1024 if itemsize == 8 and max(rs) <= 16 and all(r in (1, 2, 4, 8, 16) for r in rs) else 512
    )


@dataclass(frozen=True)
class Block:
    """One block's geometry for rows of length n: threads per row, rows per block, threads, and
    the dynamic shared memory."""

    n: int
    radices: tuple
    tpr: int
    rows: int
    threads: int
    shared: int


def block(n: int, itemsize: int, columns: bool, batch: int, shared_limit=227 * 1024) -> Block:
    """The geometry for rows of n complex values of `itemsize` bytes; `columns`: the rows lie
    side by side in memory (their elements strided), so a block takes several at once, within
    `shared_limit` bytes of shared memory."""
    rs = radices(n)
    tpr = max(1, min(n // max(rs), max_threads(rs, itemsize)))  # a thread may take several
    row_bytes = pitch(n) * itemsize + ROW_EXTRA
    if columns:  # the four-step twiddle's steps (kernels/fft.cu): at most ceil(n / tpr) a row
        row_bytes += -(-n // tpr) * itemsize
    table = table_length(n) * itemsize if len(rs) > 1 else 0
    if columns:
        budget = min(COLUMNS_SHARED, shared_limit) - table
        rows = max(1, min(MAX_COLUMNS, budget // row_bytes, batch))
    else:
        rows = max(1, min(-(-MIN_THREADS // tpr), (ROWS_SHARED - table) // row_bytes, batch))
    rows = max(1, min(rows, max_threads(rs, itemsize) // tpr))
    rows = 1 << (rows.bit_length() - 1)  # a power of two: whole sectors, even splits
    threads = -(-rows * tpr // 32) * 32
    return Block(n, rs, tpr, rows, threads, rows * row_bytes + table)


def table_length(n: int) -> int:
    """Entries of kernels/fft.cu's two twiddle tables: exp(-2 pi i k / n) for k < L and for the
    multiples of L below n, L the power of two at or above sqrt(n)."""
    lo = 1 << (((n - 1).bit_length() + 1) // 2)
    return lo + -(-n // lo)


@dataclass(frozen=True)
class Flow:
    """What one gk_fft_rows launch does around the transform, known when it is planned and
    compiled into its instance (kernels/fft.cu), so that the common case (contiguous rows, no
    conjugation, scale 1) tests and multiplies nothing per element: rows read / written
    contiguously (step 1) or through shared memory, conjugated input / output, a scale other than
    1, the four-step twiddle, outputs cut short of the length, and the batch dimensions."""

    direct_in: bool = True
    direct_out: bool = True
    conj_in: bool = False
    conj_out: bool = False
    scaled: bool = False
    twiddled: bool = False
    cropped: bool = False
    ndim: int = 1

    def __post_init__(self):
        if not 0 <= self.ndim <= CONSTANTS["GK_FFT_BATCH_DIMS"]:
            raise ValueError(f"FFT rows with {self.ndim} batch dimensions (at most "
                             f"{CONSTANTS['GK_FFT_BATCH_DIMS']})")  # fmt: skip


def defines(blk: Block, real: str, flow: Flow | None = None) -> tuple[str, ...]:
    """The compile-time parameters of kernels/fft.cu's instance for `blk` over `real` ("float" or
    "double") and `flow` (default: contiguous rows in and out, forward, unscaled, one batch
    dimension)."""
    flow = flow or Flow()
    return (
        f"GK_FFT_REAL={real}",
        f"GK_FFT_N={blk.n}",
        f"GK_FFT_RADICES={','.join(map(str, blk.radices))}",
        f"GK_FFT_TPR={blk.tpr}",
        f"GK_FFT_ROWS={blk.rows}",
        f"GK_FFT_THREADS={blk.threads}",
        f"GK_FFT_DIRECT_IN={int(flow.direct_in)}",
        f"GK_FFT_DIRECT_OUT={int(flow.direct_out)}",
        f"GK_FFT_CONJ_IN={int(flow.conj_in)}",
        f"GK_FFT_CONJ_OUT={int(flow.conj_out)}",
        f"GK_FFT_SCALED={int(flow.scaled)}",
        f"GK_FFT_TWIDDLED={int(flow.twiddled)}",
        f"GK_FFT_CROPPED={int(flow.cropped)}",
        f"GK_FFT_NDIM={flow.ndim}",
    )


def aux_defines(real: str) -> tuple[str, ...]:
    return (f"GK_FFT_REAL={real}",)


# How a length past one block splits into passes (split): "short" (the default) takes the
# balanced two passes unless their rows pass LONG_ROW_BYTES (a block of such rows holds fewer
# than 8 of them: its strided side moves segments under 64 bytes), and then rows within
# SHORT_BYTES, as few passes as that allows (2^25 complex64, rfft of 2^26: 256 x 256 x 512, column
# blocks of 16 adjacent columns, several blocks an SM, 128-byte segments; balanced: 4096 x 8192,
# two rows a block of the second pass). "balanced": two passes whenever both fit a block. H100,
# 2026-12-07 (notes/fft.md): rfft of 2^26 0.87 ms short against 1.36 balanced, complex64 2^24
# 0.308 ms as 256^3 against 0.335 as 4096 x 4096 (rows of 32 KiB: LONG_ROW_BYTES was 32 KiB
# before), while 2^21 / 2^22 (rows of 16 KiB at most) are slower in three passes.
# GK_FFT_SPLIT in the environment picks one at import; plans made after SPLIT changes follow it.
SPLITS = ("short", "balanced")
SPLIT = os.environ.get("GK_FFT_SPLIT", "short")
SHORT_BYTES = 8 * 1024
LONG_ROW_BYTES = 16 * 1024


def split(n: int, limit: int, itemsize: int = 8, policy: str | None = None) -> tuple[int, int]:
    """(n1, n2), n = n1 * n2 with n1 <= limit: the first pass transforms columns of n1 (strided
    by n2, a block taking adjacent ones), the rest rows of n2, recursively while n2 > limit.

    Balanced: two passes when both fit a block, as balanced as the divisors allow (both passes
    have a strided side, where a block of shorter rows takes more adjacent columns and so wider
    segments); else n1 the longest divisor within the limit. Short: the balanced split unless it
    has no two passes or rows past LONG_ROW_BYTES; then p = the fewest passes of rows within
    SHORT_BYTES and n1 the divisor within them nearest n^(1/p)."""
    policy = SPLIT if policy is None else policy
    if policy not in SPLITS:
        raise ValueError(f"FFT split policy {policy!r} (GK_FFT_SPLIT): one of {SPLITS}")
    divisors = [d for d in range(2, limit + 1) if n % d == 0]
    if not divisors:
        raise ValueError(f"no FFT split of {n} within {limit}")
    fits = [d for d in divisors if n // d <= limit]
    n1 = min(fits, key=lambda d: (max(d, n // d), d)) if fits else max(divisors)
    long_rows = not fits or max(n1, n // n1) * itemsize > LONG_ROW_BYTES
    if policy == "short" and long_rows:
        short = max(2, min(limit, SHORT_BYTES // itemsize))
        p = 1
        while short**p < n:
            p += 1
        within = [d for d in divisors if d <= short]
        if p > 2 and within:
            target = math.log(n) / p
            n1 = min(within, key=lambda d: (abs(math.log(d) - target), d))
    return n1, n // n1


def bluestein_length(n: int) -> int:
    """The power of two Bluestein's convolution takes: at least 2n - 1."""
    return 1 << (2 * n - 2).bit_length() if n > 1 else 1


def passes(n: int, limit: int, itemsize: int = 8, policy: str | None = None) -> int:
    """Transform passes over memory for a smooth length n."""
    if n <= limit:
        return 1
    return 1 + passes(split(n, limit, itemsize, policy)[1], limit, itemsize, policy)


def memory_bytes(n: int, batch: int, itemsize: int) -> int:
    """The least traffic of a complex transform: its input read and its output written once."""
    return 2 * n * batch * itemsize


def flops(n: int, batch: int) -> float:
    """The customary 5 n log2 n per complex transform."""
    return 5.0 * n * math.log2(max(n, 2)) * batch
