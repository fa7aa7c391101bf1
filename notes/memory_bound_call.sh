#!/usr/bin/env bash
# Issue 14's GPU-machine call, run from a copy of this checkout (.dev/membound of the lead's tree):
# build and install gpukit (scripts/gpu_machine.sh), the variant sweep (notes/memory_bound_sweep.py),
# benchmarks/bench_memory_bound.py, then the area's cuda tests in the time left before DEADLINE
# seconds; each step time-boxed so that the call's files come back ($OUT: build.log, sweep.txt,
# memory_bound_sweep.json, bench_memory_bound.txt/.json, tests.log). STEPS picks the steps.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT="${OUT:-$PWD/.gpu/out}"
mkdir -p "$OUT"
start=$SECONDS
TESTS=0 BENCH=none bash scripts/gpu_machine.sh run || exit 1
echo "built in $((SECONDS - start)) s"
export PYTHONPATH=/tmp/gpukit-site PYTHONUNBUFFERED=1
steps=",${STEPS:-sweep,bench,tests},"
if [[ $steps == *,sweep,* ]]; then
    timeout -k 5 "${T_SWEEP:-85}" python3 notes/memory_bound_sweep.py \
        ${SWEEP_ONLY:+--only "$SWEEP_ONLY"} >"$OUT/sweep.txt" 2>&1
    echo "sweep: exit $? at $((SECONDS - start)) s"
fi
if [[ $steps == *,bench,* ]]; then
    timeout -k 5 "${T_BENCH:-50}" python3 benchmarks/bench_memory_bound.py \
        >"$OUT/bench_memory_bound.txt" 2>&1
    echo "bench: exit $? at $((SECONDS - start)) s"
fi
if [[ $steps == *,tests,* ]]; then
    left=$((${DEADLINE:-255} - (SECONDS - start)))
    GPUKIT_TEST_BACKENDS=cuda timeout -k 3 "$((left > 20 ? left : 20))" python3 -m pytest -q \
        -n 8 -rfE -p no:cacheprovider tests/api/test_reductions_cumsum.py \
        tests/api/test_rows_paths.py tests/api/test_elementwise_contig.py >"$OUT/tests.log" 2>&1
    echo "tests: exit $? at $((SECONDS - start)) s"
    grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -20
    tail -1 "$OUT/tests.log"
fi
tail -22 "$OUT/bench_memory_bound.txt" 2>/dev/null
echo
sed -n '/^copy /,$p' "$OUT/sweep.txt" 2>/dev/null | grep -v "^B " | head -60
