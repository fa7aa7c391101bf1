"""The Array API's `device=` argument: a device is named as the runtime names it ("cpu",
"cuda:0", "cuda" for the first GPU) or given as a gpukit.Device. Every `device=` argument and
`to_device` resolves through `runtime_for`, the one place that knows how a device is spelled."""

from __future__ import annotations

import contextlib
import functools
import inspect

from .errors import BackendUnavailableError
from .runtime import Device, available_backends, open_backend, runtime, use_backend
from .runtime.devices import parse_device


def runtime_for(device):
    """The runtime that holds arrays on `device` (None: the current one)."""
    if device is None:
        return runtime()
    if isinstance(device, Device):
        return device._rt
    if isinstance(device, str):
        try:
            parse_device(device)
        except (BackendUnavailableError, ValueError):
            raise ValueError(
                f"unknown device {device!r}; the devices here are {', '.join(devices())}"
            ) from None
        try:
            return open_backend(device)
        except BackendUnavailableError as e:
            raise ValueError(f"device {device!r} is not available here: {e}") from None
    raise ValueError(f"unknown device {device!r}; the devices here are {', '.join(devices())}")


def devices() -> list[str]:
    """The names of the devices on this machine (every GPU of each backend that opens)."""
    out = []
    for kind in available_backends():
        if kind == "cuda":
            from .runtime.cuda import device_count

            out += [f"cuda:{i}" for i in range(device_count())]
        else:
            out.append(open_backend(kind).name)
    return out


@contextlib.contextmanager
def placed(device):
    """Within the block, new arrays go to `device` (unchanged for None)."""
    if device is None:
        yield
        return
    with use_backend(runtime_for(device).name):
        yield


def on_device(function):
    """Gives a creation function a `device=` keyword: it runs with that device's runtime."""

    @functools.wraps(function)
    def wrapper(*args, device=None, **kwargs):
        if device is None:
            return function(*args, **kwargs)
        with placed(device):
            return function(*args, **kwargs)

    signature = inspect.signature(function)
    if "device" not in signature.parameters:
        device = inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None)
        params = list(signature.parameters.values())
        at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
        wrapper.__signature__ = signature.replace(parameters=[*params[:at], device, *params[at:]])
    return wrapper
