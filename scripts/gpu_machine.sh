#!/usr/bin/env bash
# The GPU machine has Python 3.12, g++, cmake, pybind11 and numpy but no Rust toolchain and no
# network. So:
#   here:   scripts/gpu_machine.sh prepare   builds the abi3 gpukit._core into .gpu/ (git-ignored)
#   there:  scripts/gpu_machine.sh run       builds gpukit._native, installs gpukit with the carried
#                                            _core, runs the test suite on every backend found
#                                            (cuda included) and every benchmark
# With the device tool: run(command="bash scripts/gpu_machine.sh run", carry=[".gpu"]).
# BENCH=launch,matmul runs only those benchmarks (none: BENCH=none); TESTS=0 skips the suite;
# pytest arguments (e.g. tests/api tests/gpu) narrow the suite.
# Logs go to $OUT (or .gpu/out); the last lines printed are the test summary and benchmark tables.
set -euo pipefail
cd "$(dirname "$0")/.."

prepare() {
    PYO3_BUILD_EXTENSION_MODULE=1 PYO3_PYTHON="${PYTHON:-python3}" \
        cargo build --release --locked -p gpukit-py
    mkdir -p .gpu
    cp target/release/libgpukit_py.so .gpu/_core.abi3.so
    echo "built .gpu/_core.abi3.so; carry .gpu to the GPU machine"
}

run() {
    local out="${OUT:-$PWD/.gpu/out}" site=/tmp/gpukit-site build=/tmp/gpukit-build
    mkdir -p "$out"
    [ -f .gpu/_core.abi3.so ] || { echo "missing .gpu/_core.abi3.so: run '$0 prepare' here first"; exit 2; }
    export PYTHONUNBUFFERED=1
    # The copied tree's file times cannot be trusted for incremental builds: rebuild from scratch
    # whenever the native sources or kernels changed since the last build on this machine.
    local key
    key=$(find CMakeLists.txt pyproject.toml cmake native kernels -type f | sort | xargs cat | sha1sum)
    [ "$(cat "$build/source-key" 2>/dev/null)" == "$key" ] || rm -rf "$build"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    python3 -m pip install --quiet --no-build-isolation --no-deps --no-index --target "$site" \
        -C cmake.define.GPUKIT_CORE_PREBUILT="$PWD/.gpu/_core.abi3.so" \
        -C build-dir="$build" . >"$out/build.log" 2>&1 \
        || { tail -50 "$out/build.log"; exit 1; }
    echo "$key" >"$build/source-key"
    export PYTHONPATH="$site"
    python3 -c "import gpukit; print(gpukit.info())" | tee "$out/info.txt"
    local status=0
    if [ "${TESTS:-1}" != 0 ]; then
        python3 -m pytest -q -p no:cacheprovider "$@" >"$out/tests.log" 2>&1 || status=$?
    fi
    for bench in benchmarks/bench_*.py; do
        [ -e "$bench" ] || continue
        local name="${bench#benchmarks/bench_}"
        [[ -z "${BENCH:-}" || ",$BENCH," == *",${name%.py},"* ]] || continue
        python3 "$bench" >"$out/$(basename "$bench" .py).txt" 2>&1 || status=1
    done
    if [ -f "$out/tests.log" ]; then
        grep -E "^(FAILED|ERROR)" "$out/tests.log" | head -30 || true
        tail -1 "$out/tests.log"
    fi
    for f in "$out"/bench_*.txt; do [ -e "$f" ] && { echo; cat "$f"; }; done
    return "$status"
}

case "${1:-}" in
prepare) prepare ;;
run) shift; run "$@" ;;
*) echo "usage: $0 prepare|run [pytest args]"; exit 2 ;;
esac
