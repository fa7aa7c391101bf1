#!/usr/bin/env bash
# The GPU machine has Python 3.12, g++, cmake, pybind11 and numpy but no Rust toolchain and no
# network. So:
#   here:   scripts/gpu_machine.sh prepare   builds the abi3 gpukit._core into .gpu/ (git-ignored)
#   there:  scripts/gpu_machine.sh run       builds gpukit._native, installs gpukit with the carried
#                                            _core, runs the test suite on every backend found
#                                            (cuda included) and every benchmark
# With the device tool: run(command="bash scripts/gpu_machine.sh run", carry=[".gpu"]).
# BENCH=launch,matmul runs only those benchmarks (none: BENCH=none); TESTS=0 skips the suite;
# pytest arguments (e.g. tests/api tests/gpu) narrow the suite; `-n 8` spreads it over 8 processes
# (pytest-xdist is on the machine); every test is named as it ends and one past TEST_TIMEOUT
# seconds (default 120) is ended with its stacks dumped (pytest-timeout, on the machine too).
# Wheels in .whl/ (carried) are installed beside gpukit.
# SANITIZE=1 runs, instead of the suite and benchmarks, the tests of scripts/sanitize_tests.txt
# (cuda only) under compute-sanitizer with each of memcheck, racecheck, initcheck and synccheck
# (SANITIZE=memcheck,racecheck: those only), failing on any error a tool reports, on a skipped
# test or on a tool's run past SANITIZE_TIMEOUT seconds (default 120). DRY_RUN=1 (with SANITIZE)
# builds nothing: it checks that every listed test exists (collected on the cpu backend with
# $PYTHON, default python3) and prints the commands it would run. INSTALLED=1 (with SANITIZE)
# builds nothing either: gpukit is installed already on $PYTHONPATH (e.g. while a suite runs).
# Logs go to $OUT (or .gpu/out); the last lines printed are the test summary and benchmark tables.
set -euo pipefail
cd "$(dirname "$0")/.."

SANITIZERS=(memcheck racecheck initcheck synccheck)

prepare() {
    PYO3_BUILD_EXTENSION_MODULE=1 PYO3_PYTHON="${PYTHON:-python3}" \
        cargo build --release --locked -p gpukit-py
    mkdir -p .gpu
    cp target/release/libgpukit_py.so .gpu/_core.abi3.so
    echo "built .gpu/_core.abi3.so; carry .gpu to the GPU machine"
}

# Builds _native and installs gpukit into a scratch directory (PYTHONPATH points there after).
install() {
    local out="$1" site=/tmp/gpukit-site build=/tmp/gpukit-build
    [ -f .gpu/_core.abi3.so ] || { echo "missing .gpu/_core.abi3.so: run '$0 prepare' here first"; exit 2; }
    export PYTHONUNBUFFERED=1
    # The copied tree's file times cannot be trusted for incremental builds: rebuild from scratch
    # whenever the native sources or kernels changed since the last build on this machine.
    local key
    key=$(find CMakeLists.txt pyproject.toml cmake native kernels -type f | sort | xargs cat | sha1sum)
    [ "$(cat "$build/source-key" 2>/dev/null)" == "$key" ] || rm -rf "$build"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    # pip --target keeps a package already there ("Specify --upgrade to force replacement"): on a
    # machine still warm from an earlier call, that call's gpukit would be the one tested.
    rm -rf "$site"
    python3 -m pip install --quiet --no-build-isolation --no-deps --no-index --target "$site" \
        -C cmake.define.GPUKIT_CORE_PREBUILT="$PWD/.gpu/_core.abi3.so" \
        -C build-dir="$build" . >"$out/build.log" 2>&1 \
        || { tail -50 "$out/build.log"; exit 1; }
    echo "$key" >"$build/source-key"
    # Test-extra packages the machine lacks (it has no network) travel as wheels in .whl/.
    if compgen -G ".whl/*.whl" >/dev/null; then
        python3 -m pip install --quiet --no-index --no-deps --target "$site" .whl/*.whl
    fi
    export PYTHONPATH="$site"
    python3 -c "import gpukit; print(gpukit.info())" | tee "$out/info.txt"
}

# The tests of scripts/sanitize_tests.txt under each compute-sanitizer tool named in $SANITIZE.
sanitize() {
    local out="$1" tool status=0 tools ids
    if [ "$SANITIZE" = 1 ]; then
        tools=("${SANITIZERS[@]}")
    else
        IFS=, read -ra tools <<<"$SANITIZE"
    fi
    for tool in "${tools[@]}"; do
        [[ " ${SANITIZERS[*]} " == *" $tool "* ]] \
            || { echo "SANITIZE: unknown tool '$tool' (known: ${SANITIZERS[*]})"; exit 2; }
    done
    mapfile -t ids < <(grep -Ev '^[[:space:]]*(#|$)' scripts/sanitize_tests.txt)
    local sanitizer="${COMPUTE_SANITIZER:-}"
    if [ -z "$sanitizer" ]; then
        sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    fi
    if [ "${DRY_RUN:-0}" = 1 ]; then
        # Every listed test must exist: collected here with cpu in place of cuda.
        local listing collected
        listing=$(GPUKIT_TEST_BACKENDS=cpu "${PYTHON:-python3}" -m pytest --collect-only -q \
            -p no:cacheprovider "${ids[@]//\[cuda/[cpu}" 2>&1) || true
        collected=$(grep -c '::' <<<"$listing" || true)
        echo "collected $collected of ${#ids[@]} listed tests"
        if [ "$collected" != "${#ids[@]}" ]; then
            grep -iE 'error|not found' <<<"$listing" | head -20 || true
            status=1
        fi
    elif [ ! -x "$sanitizer" ]; then
        echo "compute-sanitizer not found (set COMPUTE_SANITIZER)"
        return 2
    fi
    for tool in "${tools[@]}"; do
        local log="$out/sanitize-$tool.log" rc=0
        local cmd=(timeout -k 10 "${SANITIZE_TIMEOUT:-120}" "$sanitizer" --tool "$tool"
            --error-exitcode 86 --print-limit 20 --target-processes application-only
            python3 -m pytest -q -rs -p no:cacheprovider "${ids[@]}")
        if [ "${DRY_RUN:-0}" = 1 ]; then
            printf 'GPUKIT_TEST_BACKENDS=cuda'
            printf ' %q' "${cmd[@]}"
            printf ' >%q 2>&1\n' "$log"
            continue
        fi
        GPUKIT_TEST_BACKENDS=cuda "${cmd[@]}" >"$log" 2>&1 || rc=$?
        local summary result
        summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -1 || true)
        result=$(grep -E '^[=]* *[0-9]+ (passed|failed|error)' "$log" | tail -1 || true)
        echo "$tool: exit $rc; ${summary:-no sanitizer summary}; ${result:-no pytest summary}"
        if [ "$rc" != 0 ] || [[ "$result" == *skipped* || -z "$result" ]]; then
            status=1
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                echo "  $tool ran past ${SANITIZE_TIMEOUT:-120} s"
            fi
            grep -E '^=========|^(FAILED|ERROR|SKIPPED)' "$log" | head -40 || true
        fi
    done
    return "$status"
}

run() {
    local out="${OUT:-$PWD/.gpu/out}"
    mkdir -p "$out"
    if [ -n "${SANITIZE:-}" ]; then
        [ "${DRY_RUN:-0}" = 1 ] || [ "${INSTALLED:-0}" = 1 ] || install "$out"
        sanitize "$out"
        return
    fi
    install "$out"
    local status=0
    # The property tests (tests/api/test_properties_*) compile a kernel for each new combination
    # of op and dtypes they draw, so on a fresh machine they run at 0.3 of CI's example counts.
    export GPUKIT_PROPERTY_EXAMPLES="${GPUKIT_PROPERTY_EXAMPLES:-0.3}"
    if [ "${TESTS:-1}" != 0 ]; then
        # -v names each test as it ends, so a run cut short still says what failed; a test past
        # TEST_TIMEOUT seconds is ended by pytest-timeout's thread method, which also ends a wait
        # inside a driver call, and dumps every thread's stack.
        python3 -m pytest -v -rfE -p no:cacheprovider --timeout "${TEST_TIMEOUT:-120}" \
            --timeout-method=thread "$@" >"$out/tests.log" 2>&1 || status=$?
    fi
    for bench in benchmarks/bench_*.py; do
        [ -e "$bench" ] || continue
        local name="${bench#benchmarks/bench_}"
        [[ -z "${BENCH:-}" || ",$BENCH," == *",${name%.py},"* ]] || continue
        python3 "$bench" >"$out/$(basename "$bench" .py).txt" 2>&1 || status=1
    done
    if [ -f "$out/tests.log" ]; then
        grep -E "(FAILED|ERROR) tests/" "$out/tests.log" | sort -u | head -60 || true
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
