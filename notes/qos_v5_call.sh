#!/usr/bin/env bash
# One device call for issue 17's version 5 (run from the exported tree's root on the GPU machine,
# logs to $OUT): install; bench_sched's service part only (gemm flood, preempting scheduler,
# 1 ms and 0.3 ms, per-step events on); then the preemption tests with what time is left.
set -uo pipefail
LIMIT="${LIMIT:-205}"
export GPUKIT_TEST_BACKENDS=cuda PYTHONUNBUFFERED=1
TESTS=0 BENCH=none timeout 100 bash scripts/gpu_machine.sh run >"$OUT/install.log" 2>&1 || {
    tail -30 "$OUT/install.log"; echo "install failed"; exit 1; }
echo "installed at ${SECONDS}s"
export PYTHONPATH=/tmp/gpukit-site
BENCH_SCHED_PARTS=service BENCH_SCHED_SERVICE_FLOODS=gemm BENCH_SCHED_SERVICE_SCHEDS=preempt \
    BENCH_SCHED_SERVICE_TORCH=0 BENCH_SCHED_SERVICE_RUNS="${RUNS:-3}" BENCH_SCHED_SERVICE_EVENTS=1 \
    timeout "${BENCH_LIMIT:-95}" python3 benchmarks/bench_sched.py >"$OUT/bench_sched.txt" 2>&1
echo "bench rc $? at ${SECONDS}s"
t=$((LIMIT - SECONDS))
if [ "$t" -gt 20 ]; then
    timeout "$t" python3 -m pytest -v -rfE -p no:cacheprovider -n 4 --timeout 120 \
        --timeout-method=thread tests/gpu/test_preempt_gemm.py tests/api/test_scheduler_preempt.py \
        >"$OUT/tests.log" 2>&1
    echo "tests rc $? at ${SECONDS}s"
    grep -E "(FAILED|ERROR) tests/" "$OUT/tests.log" | sort -u | head -20
    tail -1 "$OUT/tests.log"
fi
grep -v "^\(gpukit\|backend\|device\|hip\|CUDA\|NVRTC\|HIP\|hiprtc\|compiler\|matmul\|preemption  \|green\|kernel cache\)" \
    "$OUT/bench_sched.txt" | tail -40
