"""The package's layers import only downward, without cycles (every import statement counts,
module-level or inside a function), and `import gpukit` loads no driver."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpukit as gk

PACKAGE = Path(gk.__file__).resolve().parent
NATIVE = ("gpukit._native", "gpukit._core")
FRONT_END = ("array", "elementwise", "reductions", "linalg", "indexing", "views", "creation")
FRONT_END += ("random", "sorting", "complex_parts", "rounding")
# The Array API namespace and the NumPy functions composed from the ops above.
FRONT_END += ("array_args", "device_arg", "data_types", "array_api", "methods", "manipulation")
FRONT_END += ("statistics", "comparison", "products", "einsum", "matrices", "grids", "padding")
FRONT_END += ("searching", "elementwise_composed", "numerical", "fft")
FRONT_END += ("decompositions", "norms", "linalg_vectors", "fused_products", "linalg_steps")
FRONT_END += ("orthogonal",)
LIBRARIES = ("nn", "models", "io", "interop", "streams", "memory", "scheduler", "jit", "kernel")
LIBRARIES += ("info", "graphs")
LAYERS = ["base", "native", "runtime", "front end", "libraries", "package"]


def layer(module: str) -> str:
    if module in NATIVE:
        return "native"
    if module == "gpukit":
        return "package"
    top = module.split(".")[1]
    if top in ("base", "errors"):
        return "base"
    if top == "runtime":
        return "runtime"
    if top in FRONT_END:
        return "front end"
    if top in LIBRARIES:
        return "libraries"
    raise AssertionError(f"{module} belongs to no layer: add it to test_layers.py")


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(("gpukit", *parts))] = path
    return out


def imports(module: str, path: Path, known) -> set[str]:
    """The gpukit modules `module` imports anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("gpukit")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("gpukit"):
                continue
            for alias in node.names:  # `from x import y`: the submodule y when there is one
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known or sub in NATIVE else target)
    found.discard(module)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: imports(m, p, known) for m, p in known.items()}


def test_every_module_belongs_to_a_layer():
    for module in graph():
        assert layer(module) in LAYERS


def test_layers_import_only_downward():
    upward = []
    for module, targets in graph().items():
        for target in targets:
            if LAYERS.index(layer(target)) > LAYERS.index(layer(module)):
                upward.append(f"{module} ({layer(module)}) imports {target} ({layer(target)})")
            if layer(module) == "base" and layer(target) == "native":
                upward.append(f"{module}: the base layer is pure Python, not {target}")
    assert not upward, "\n".join(upward)


def test_no_import_cycles():
    g = graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for t in sorted(g.get(m, ())):
            if state.get(t) == 1:
                cycle = [*path[path.index(t) :], t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)


def test_backends_never_import_the_front_end():
    for module, targets in graph().items():
        if module.startswith("gpukit.runtime"):
            assert all(layer(t) in ("base", "native", "runtime") for t in targets), module


def test_front_end_and_libraries_ask_backends_through_the_protocol():
    """No probing a runtime for attributes, no reaching into the CUDA device object."""
    for module, path in modules().items():
        if layer(module) not in ("front end", "libraries"):
            continue
        text = path.read_text()
        for pattern in ('hasattr(rt, "', "rt.device.", "_rt.device."):
            assert pattern not in text, f"{module} uses {pattern}"


POISON = r"""
#include <cstdlib>
__attribute__((constructor)) static void poisoned() { std::abort(); }
"""


def run_python(code, **env):
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_import_loads_no_driver(tmp_path):
    """A libcuda.so.1 that aborts whoever loads it is first on the library path: importing
    gpukit (and making its default runtime on the CPU) must not touch it."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the poisoned driver with")
    (tmp_path / "poison.cpp").write_text(POISON)
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(tmp_path / "libcuda.so.1"), "poison.cpp"],
        cwd=tmp_path,
        check=True,
    )
    env = {"LD_LIBRARY_PATH": f"{tmp_path}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    code = "import gpukit, sys; sys.exit(bool(gpukit.runtime.opened()))"
    r = run_python(code, **env, GPUKIT_BACKEND="cpu")
    assert r.returncode == 0, r.stderr
    r = run_python(
        "import gpukit; print(gpukit.zeros(2).sum().item())", **env, GPUKIT_BACKEND="cpu"
    )
    assert r.returncode == 0 and r.stdout.strip() == "0.0", r.stderr
    # The poison works: opening the CUDA backend loads the driver and aborts.
    r = run_python("import gpukit; gpukit.zeros(2)", **env, GPUKIT_BACKEND="cuda")
    assert r.returncode != 0
