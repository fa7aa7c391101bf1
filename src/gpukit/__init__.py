"""gpukit: NumPy-like arrays on the GPU, kernels compiled at run time, a Rust memory pool.

Without a GPU driver everything runs on the CPU through NumPy, with the same API.
"""

__version__ = "0.1.0"

from . import jit, linalg, memory, models, nn, random, scheduler
from ._dtypes import bfloat16
from ._info import info
from ._runtime import available_backends, use_backend
from ._runtime import runtime as _current_runtime
from .array import (
    GPUArray,
    asarray,
    elementwise,
    empty,
    matmul,
    reduce,
)
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
from .interop import from_dlpack
from .kernel import ElementwiseKernel, RawKernel
from .linalg import dot, linear
from .reductions import all, any, argmax, argmin, cumsum, max, mean, min, prod, std, sum, var
from .safetensors import load_safetensors, save_safetensors
from .scheduler import Scheduler
from .streams import Event, Stream, synchronize
from .ufuncs import *  # noqa: F403  (exp, maximum, where, ... with NumPy's names)
from .ufuncs import __all__ as _ufunc_names
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


def backend() -> str:
    """ "cuda", "hip" or "cpu": the backend this process runs on (chosen at first use)."""
    return _current_runtime().name


__all__ = [
    *_ufunc_names,
    "BackendUnavailableError",
    "CompileError",
    "CudaError",
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
    "arange",
    "all",
    "any",
    "argmax",
    "argmin",
    "asarray",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
    "ascontiguousarray",
    "broadcast_to",
    "concatenate",
    "cumsum",
    "dot",
    "empty_like",
    "expand_dims",
    "eye",
    "full_like",
    "linspace",
    "ones_like",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "transpose",
    "zeros_like",
    "available_backends",
    "bfloat16",
    "backend",
    "elementwise",
    "empty",
    "from_dlpack",
    "from_numpy",
    "full",
    "info",
    "jit",
    "load_safetensors",
    "linalg",
    "linear",
    "matmul",
    "memory",
    "models",
    "nn",
    "ones",
    "reduce",
    "save_safetensors",
    "scheduler",
    "synchronize",
    "to_numpy",
    "use_backend",
    "zeros",
    "flatnonzero",
    "nonzero",
    "random",
    "take",
]
