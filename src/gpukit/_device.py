"""Devices as the Array API names them: today a device is a backend's name ("cpu", "cuda").

Every `device=` argument and `to_device` resolves through `runtime_for`, the one place that
knows how a device is spelled."""

from __future__ import annotations

import functools
import inspect

from ._runtime import BACKENDS, available_backends, open_backend, runtime, use_backend
from .errors import BackendUnavailableError


def runtime_for(device):
    """The runtime that holds arrays on `device` (None: the current one)."""
    if device is None:
        return runtime()
    if isinstance(device, str) and device in BACKENDS:
        try:
            return open_backend(device)
        except BackendUnavailableError as e:
            raise ValueError(f"device {device!r} is not available here: {e}") from None
    raise ValueError(
        f"unknown device {device!r}; the devices here are {', '.join(available_backends())}"
    )


def name_of(rt) -> str:
    """The device name of a runtime (what GPUArray.device returns)."""
    return rt.name


def devices() -> list[str]:
    return [name_of(open_backend(n)) for n in available_backends()]


def on_device(function):
    """Gives a creation function a `device=` keyword: it runs with that device's backend."""

    @functools.wraps(function)
    def wrapper(*args, device=None, **kwargs):
        if device is None:
            return function(*args, **kwargs)
        with use_backend(runtime_for(device).name):
            return function(*args, **kwargs)

    signature = inspect.signature(function)
    if "device" not in signature.parameters:
        device = inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None)
        params = list(signature.parameters.values())
        at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
        wrapper.__signature__ = signature.replace(parameters=[*params[:at], device, *params[at:]])
    return wrapper
