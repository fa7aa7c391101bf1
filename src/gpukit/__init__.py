"""gpukit: NumPy-like arrays on the GPU, kernels compiled at run time, a Rust memory pool.

Without a GPU driver everything runs on the CPU through NumPy, with the same API. Layers, each
importing only those below it: gpukit.base (dtypes, shapes, sizes; gpukit.errors), gpukit.runtime
(backends, op table, kernels, JIT, plans), the front end (gpukit.array and the op modules), and
the libraries (nn, models, io, interop, streams, memory, scheduler, graphs, jit, kernel)."""

from . import elementwise as _elementwise_module
from . import fft, jit, linalg, memory, models, nn, random, scheduler
from . import indexing as _indexing
from . import interop as _interop
from . import methods as _methods
from . import searching as _searching
from .array import GPUArray
from .array_api import (
    __array_api_version__,
    __array_namespace_info__,
    e,
    inf,
    nan,
    newaxis,
    pi,
)
from .base.version import VERSION
from .comparison import *  # noqa: F403
from .comparison import __all__ as _comparison_names
from .complex_parts import imag, real
from .creation import (
    arange,
    array,
    asarray,
    copy,
    empty,
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
from .data_types import DTYPES as _DTYPES
from .data_types import astype, can_cast, finfo, iinfo, isdtype, result_type
from .einsum import einsum
from .elementwise import FUNCTIONS as _ufuncs
from .elementwise import elementwise
from .elementwise_composed import *  # noqa: F403
from .elementwise_composed import __all__ as _composed_names
from .errors import (
    BackendUnavailableError,
    CompileError,
    CudaError,
    DeviceError,
    GpukitError,
    GraphCaptureError,
    HipError,
    LinAlgError,
    OutOfMemoryError,
    SafeTensorsError,
    TaskRejectedError,
    TaskTimeoutError,
)
from .graphs import Graph, graph
from .grids import *  # noqa: F403
from .grids import __all__ as _grid_names
from .indexing import flatnonzero, nonzero, take
from .info import info
from .interop import from_dlpack
from .io import load_safetensors, save_safetensors
from .kernel import ElementwiseKernel, RawKernel
from .linalg import dot, linear, matmul, vdot
from .manipulation import *  # noqa: F403
from .manipulation import __all__ as _manipulation_names
from .matrices import *  # noqa: F403
from .matrices import __all__ as _matrix_names
from .numerical import *  # noqa: F403
from .numerical import __all__ as _numerical_names
from .padding import pad
from .products import *  # noqa: F403
from .products import __all__ as _product_names
from .reductions import all, any, reduce
from .rounding import around, round
from .runtime import Device, available_backends, use_backend
from .runtime import devices as _devices
from .scheduler import Scheduler
from .searching import *  # noqa: F403
from .searching import __all__ as _searching_names
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
from .statistics import *  # noqa: F403
from .statistics import __all__ as _statistics_names
from .streams import Event, Stream, synchronize
from .views import ascontiguousarray, broadcast_to, expand_dims, squeeze, stack, swapaxes, transpose

linalg.tensordot = tensordot  # noqa: F405 (the Array API's linalg.tensordot is NumPy's)
globals().update(_ufuncs)  # exp, maximum, where, ... with NumPy's names
where = _searching.where  # the ufunc, and with one argument nonzero()
globals().update(_DTYPES)  # gk.bool, gk.int8, ..., gk.float64 (NumPy dtype objects)
_methods.install()
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
    *_DTYPES,
    *_comparison_names,
    *_composed_names,
    *_grid_names,
    *_manipulation_names,
    *_matrix_names,
    *_numerical_names,
    *_product_names,
    *_searching_names,
    *_statistics_names,
    "__array_api_version__",
    "__array_namespace_info__",
    "array",
    "astype",
    "can_cast",
    "copy",
    "e",
    "einsum",
    "fft",
    "finfo",
    "iinfo",
    "inf",
    "isdtype",
    "nan",
    "newaxis",
    "pad",
    "pi",
    "result_type",
    "BackendUnavailableError",
    "CompileError",
    "CudaError",
    "Device",
    "DeviceError",
    "ElementwiseKernel",
    "Event",
    "GPUArray",
    "GpukitError",
    "Graph",
    "GraphCaptureError",
    "HipError",
    "LinAlgError",
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
    "argpartition",
    "argsort",
    "asarray",
    "ascontiguousarray",
    "available_backends",
    "backend",
    "around",
    "vdot",
    "imag",
    "real",
    "round",
    "bincount",
    "broadcast_to",
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
    "graph",
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
    "median",
    "memory",
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
    "quantile",
    "random",
    "reduce",
    "save_safetensors",
    "scheduler",
    "searchsorted",
    "setdiff1d",
    "sort",
    "squeeze",
    "stack",
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
    "zeros",
    "zeros_like",
]
__all__ = sorted(set(__all__))
