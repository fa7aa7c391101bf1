"""gpukit: NumPy-like arrays on the GPU, kernels compiled at run time, a Rust memory pool.

Without a GPU driver everything runs on the CPU through NumPy, with the same API. Layers, each
importing only those below it: gpukit.base (dtypes, shapes, sizes; gpukit.errors), gpukit.runtime
(backends, op table, kernels, JIT, plans), the front end (gpukit.array and the op modules), and
the libraries (nn, models, io, interop, streams, memory, scheduler, jit, kernel)."""

from . import elementwise as _elementwise_module
from . import indexing as _indexing
from . import interop as _interop
from . import jit, linalg, memory, models, nn, random, scheduler
from .array import GPUArray, asarray, empty
from .base.dtypes import bfloat16
from .base.version import VERSION
from .creation import (
    arange,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    to_numpy,
    zeros,
    zeros_like,
)
from .elementwise import FUNCTIONS as _ufuncs
from .elementwise import elementwise
from .errors import (
    BackendUnavailableError,
    CompileError,
    CudaError,
    DeviceError,
    GpukitError,
    HipError,
    OutOfMemoryError,
    SafeTensorsError,
    TaskRejectedError,
    TaskTimeoutError,
)
from .indexing import flatnonzero, nonzero, take
from .info import info
from .interop import from_dlpack
from .io import load_safetensors, save_safetensors
from .kernel import ElementwiseKernel, RawKernel
from .linalg import dot, linear, matmul
from .reductions import (
    all,
    any,
    argmax,
    argmin,
    cumsum,
    max,
    mean,
    min,
    prod,
    reduce,
    std,
    sum,
    var,
)
from .runtime import Device, available_backends, use_backend
from .runtime import devices as _devices
from .scheduler import Scheduler
from .sorting import (
    argpartition,
    argsort,
    bincount,
    digitize,
    histogram,
    in1d,
    intersect1d,
    isin,
    lexsort,
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    partition,
    percentile,
    quantile,
    searchsorted,
    setdiff1d,
    sort,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from .streams import Event, Stream, synchronize
from .views import (
    ascontiguousarray,
    broadcast_to,
    concatenate,
    expand_dims,
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
)

globals().update(_ufuncs)  # exp, maximum, where, ... with NumPy's names
del _elementwise_module, _indexing, _interop
__version__ = VERSION


def backend() -> str:
    """ "cuda", "hip" or "cpu": the backend new arrays go to (the process default is chosen at
    first use)."""
    return _devices.runtime().kind


def device() -> Device:
    """The device new arrays go to."""
    return Device()


__all__ = [
    *sorted(_ufuncs),
    "BackendUnavailableError",
    "CompileError",
    "CudaError",
    "Device",
    "DeviceError",
    "ElementwiseKernel",
    "Event",
    "GPUArray",
    "GpukitError",
    "HipError",
    "OutOfMemoryError",
    "RawKernel",
    "SafeTensorsError",
    "Scheduler",
    "Stream",
    "TaskRejectedError",
    "TaskTimeoutError",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "argpartition",
    "argsort",
    "asarray",
    "ascontiguousarray",
    "available_backends",
    "backend",
    "bfloat16",
    "bincount",
    "broadcast_to",
    "concatenate",
    "cumsum",
    "device",
    "digitize",
    "dot",
    "elementwise",
    "empty",
    "empty_like",
    "expand_dims",
    "eye",
    "flatnonzero",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "histogram",
    "in1d",
    "info",
    "intersect1d",
    "isin",
    "jit",
    "lexsort",
    "linalg",
    "linear",
    "linspace",
    "load_safetensors",
    "matmul",
    "max",
    "mean",
    "median",
    "memory",
    "min",
    "models",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nn",
    "nonzero",
    "ones",
    "ones_like",
    "partition",
    "percentile",
    "prod",
    "quantile",
    "random",
    "reduce",
    "save_safetensors",
    "scheduler",
    "searchsorted",
    "setdiff1d",
    "sort",
    "split",
    "squeeze",
    "stack",
    "std",
    "sum",
    "swapaxes",
    "synchronize",
    "take",
    "to_numpy",
    "transpose",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "use_backend",
    "var",
    "zeros",
    "zeros_like",
]
