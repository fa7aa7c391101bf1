"""Random numbers generated on the device by a counter-based generator (Philox4x32-10).

Each call draws from counter (element group, offset) under key = the seed, then advances the
generator's offset by one, so calls never share counters and any element can be computed on its
own. The CPU backend runs the same generator in NumPy: one seed gives the same numbers on every
backend (uniforms and integers bit for bit, normals to a few ulps of the math library).

- `rand`/`uniform`: [0, 1) with as many random bits as the dtype's significand (11 for float16,
  24 for float32, 53 for float64), so every value is exact and 1.0 never occurs.
- `randn`/`normal`: Box-Muller on a pair of uniforms (24-bit ones for float16/float32).
- `randint`: multiply-shift (Lemire) without rejection: the high half of draw * range, with a
  32-bit draw when range <= 2^32 (each value's probability is off by less than range / 2^32
  relative) and a 64-bit draw otherwise.
"""

from __future__ import annotations

import operator
import secrets
import threading

import numpy as np

from .array import GPUArray, cached_plan, wrap
from .base import dtypes as _dtypes
from .base import shapes as _shapes
from .runtime import runtime
from .runtime.backend import Layout
from .runtime.quota import local as _quota

__all__ = [
    "Generator",
    "default_generator",
    "normal",
    "rand",
    "randint",
    "randn",
    "seed",
    "uniform",
]


def _shape_of(shape) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]  # rand((2, 3)) as well as rand(2, 3)
    return _shapes.as_shape(shape)


def _size(size) -> tuple[int, ...]:
    return () if size is None else _shapes.as_shape(size)


def _float_dtype(dtype) -> np.dtype:
    dtype = _dtypes.normalize(dtype)
    if dtype == _dtypes.bfloat16:
        raise TypeError(
            "random floats are drawn as float16, float32 or float64, not bfloat16 (rounding "
            "float32 draws to bfloat16 would give 1.0); convert with .astype after drawing"
        )
    if dtype.kind != "f":
        raise TypeError(f"random floats need a floating dtype, not {dtype.name}")
    return dtype


def _real(value, what: str) -> float:
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a real number, not {value!r}")
    return float(value)


class Generator:
    """A Philox4x32-10 stream: a 64-bit key (the seed) and an offset advanced by every call."""

    def __init__(self, seed: int | None = None):
        self._lock = threading.Lock()
        self.seed(seed)

    def seed(self, seed: int | None = None) -> None:
        """Restarts the stream from `seed` (a non-negative int; None: fresh entropy)."""
        if seed is None:
            seed = secrets.randbits(64)
        seed = operator.index(seed)
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        with self._lock:
            self._key = seed % 2**64
            self._offset = 0

    def _draw(self, kernel: str, shape, dtype, **params) -> GPUArray:
        with self._lock:
            offset = self._offset
            self._offset = (self._offset + 1) % 2**64
        rt = runtime()
        dtype = _dtypes.normalize(dtype)
        shape = _shapes.as_shape(shape)
        _shapes.nbytes(shape, dtype.itemsize)  # ValueError past what can be addressed
        strides = _shapes.contiguous_strides(shape, dtype.itemsize)
        affine = bool(params.get("affine", False))
        plan = cached_plan(
            ("philox", rt, kernel, dtype, shape, affine),
            lambda: rt.plan_philox(kernel, Layout(dtype, shape, strides), affine),
        )
        args = (
            self._key,
            offset,
            float(params.get("lo", 0.0)),
            float(params.get("scale", 1.0)),
            int(params.get("low", 0)) % 2**64,
            int(params.get("range", 0)) % 2**64,
        )
        return wrap(plan(rt.thread.stream, _quota.quota, *args), shape, dtype, strides, rt)

    def rand(self, *shape, dtype="float64") -> GPUArray:
        """Uniform floats in [0, 1) of `shape`."""
        return self.uniform(0.0, 1.0, _shape_of(shape), dtype)

    def randn(self, *shape, dtype="float64") -> GPUArray:
        """Standard normal floats of `shape`."""
        return self.normal(0.0, 1.0, _shape_of(shape), dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype="float64") -> GPUArray:
        """Uniform floats in [low, high)."""
        dtype = _float_dtype(dtype)
        low, high = _real(low, "low"), _real(high, "high")
        kernel = "gk_rand_d" if dtype == np.float64 else "gk_rand_f"
        affine = (low, high) != (0.0, 1.0)
        return self._draw(
            kernel, _size(size), dtype, lo=float(low), scale=float(high - low), affine=affine
        )

    def normal(self, loc=0.0, scale=1.0, size=None, dtype="float64") -> GPUArray:
        """Normal floats of mean `loc` and standard deviation `scale`."""
        dtype = _float_dtype(dtype)
        loc, scale = _real(loc, "loc"), _real(scale, "scale")
        if scale < 0:
            raise ValueError(f"scale must be non-negative, got {scale}")
        kernel = "gk_randn_d" if dtype == np.float64 else "gk_randn_f"
        affine = (loc, scale) != (0.0, 1.0)
        return self._draw(
            kernel, _size(size), dtype, lo=float(loc), scale=float(scale), affine=affine
        )

    def randint(self, low, high=None, size=None, dtype="int64") -> GPUArray:
        """Integers in [low, high) ([0, low) without high) of an integer dtype."""
        dtype = _dtypes.normalize(dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"randint needs an integer dtype, not {dtype.name}")
        if high is None:
            low, high = 0, low
        low, high = operator.index(low), operator.index(high)
        if low >= high:
            raise ValueError(f"low >= high ({low} >= {high})")
        info = np.iinfo(dtype)
        if low < info.min:
            raise ValueError(f"low {low} is out of bounds for {dtype.name}")
        if high - 1 > info.max:
            raise ValueError(f"high {high} is out of bounds for {dtype.name}")
        span = high - low
        kernel = "gk_randint_32" if span <= 2**32 else "gk_randint_64"
        return self._draw(kernel, _size(size), dtype, low=low % 2**64, range=span % 2**64)


_default = Generator()


def seed(n: int | None = None) -> None:
    """Reseeds the global generator (and restarts its offset)."""
    _default.seed(n)


def default_generator() -> Generator:
    return _default


def rand(*shape, dtype="float64") -> GPUArray:
    return _default.rand(*shape, dtype=dtype)


def randn(*shape, dtype="float64") -> GPUArray:
    return _default.randn(*shape, dtype=dtype)


def uniform(low=0.0, high=1.0, size=None, dtype="float64") -> GPUArray:
    return _default.uniform(low, high, size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype="float64") -> GPUArray:
    return _default.normal(loc, scale, size, dtype)


def randint(low, high=None, size=None, dtype="int64") -> GPUArray:
    return _default.randint(low, high, size, dtype)
