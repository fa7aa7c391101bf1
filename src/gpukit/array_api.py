"""The Array API namespace's own attributes: its version, constants and
`__array_namespace_info__()` (what gpukit can do, its devices and dtypes)."""

from __future__ import annotations

import math

import numpy as np

from . import device_arg as _device
from .data_types import DTYPES, isdtype

__array_api_version__ = "2023.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12")

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

# gpukit's dtypes outside the standard; every other dtype gpukit has is one of the standard's.
EXTRA_DTYPE_NAMES = ("float16", "bfloat16")


def check_api_version(api_version) -> None:
    """What __array_namespace__(api_version) accepts: None or a version gpukit implements."""
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise ValueError(
            f"gpukit implements Array API versions {', '.join(SUPPORTED_VERSIONS)}, "
            f"not {api_version!r}"
        )


class Info:
    """The inspection namespace of the Array API (gpukit.__array_namespace_info__())."""

    __module__ = "gpukit"

    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        return _device.runtime_for(None).name

    def devices(self) -> list:
        return _device.devices()

    def default_dtypes(self, *, device=None) -> dict:
        _device.runtime_for(device)
        return {
            "real floating": np.dtype("float64"),
            "complex floating": np.dtype("complex128"),
            "integral": np.dtype("int64"),
            "indexing": np.dtype("int64"),
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes gpukit has, by name (float16 and bfloat16 are gpukit's extras,
        outside the standard); `kind` (a kind name, a tuple of kinds, or None for all) selects
        them as isdtype does."""
        _device.runtime_for(device)
        standard = {n: d for n, d in DTYPES.items() if n not in EXTRA_DTYPE_NAMES}
        if kind is None:
            return standard
        return {name: d for name, d in standard.items() if isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    return Info()
