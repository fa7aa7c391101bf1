"""Exceptions gpukit raises. The native modules raise these same classes."""

import numpy as np


class GpukitError(Exception):
    """Base class of gpukit's own errors."""


class BackendUnavailableError(GpukitError, RuntimeError):
    """The backend asked for (GPUKIT_BACKEND or an argument) cannot be used here."""


class DeviceError(GpukitError, RuntimeError):
    """A call into a device driver failed. `call` names it, `name` is the driver's error name."""

    def __init__(self, message, call=None, code=None, name=None):
        super().__init__(message)
        self.call = call
        self.code = code
        self.name = name


class CudaError(DeviceError):
    """A CUDA driver call failed, e.g. name == "CUDA_ERROR_OUT_OF_MEMORY"."""


class HipError(DeviceError):
    """A HIP runtime call failed."""


class CompileError(GpukitError):
    """Run-time compilation of a kernel failed; `log` holds the compiler's log."""

    def __init__(self, message, log=""):
        super().__init__(f"{message}\n{log}" if log else message)
        self.log = log


class LinAlgError(GpukitError, np.linalg.LinAlgError):
    """A linear-algebra routine failed where NumPy's raises (a singular matrix, one not positive
    definite, no convergence); `except numpy.linalg.LinAlgError` catches it."""


class OutOfMemoryError(GpukitError, MemoryError):
    """The pool could not satisfy a request, even after freeing its cache."""

    def __init__(self, message, requested=None, allocated=None, reserved=None, limit=None):
        super().__init__(message)
        self.requested = requested
        self.allocated = allocated
        self.reserved = reserved
        self.limit = limit


class SafeTensorsError(GpukitError, ValueError):
    """A SafeTensors file is malformed or inconsistent; the message names the file, the tensor
    and the problem."""


class TaskRejectedError(GpukitError, RuntimeError):
    """A scheduler task submitted with admission="reject" did not fit when it was submitted."""


class TaskTimeoutError(GpukitError, TimeoutError):
    """A scheduler task waited in its queue longer than its timeout."""


class GraphCaptureError(GpukitError, RuntimeError):
    """Something a graph capture cannot hold was asked for inside one (work that waits for the
    device or reads data back, a nested capture, a stream switch), or a graph was used wrongly
    (replayed before its capture or after its release). A failed capture is ended cleanly."""
