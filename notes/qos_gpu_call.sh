#!/usr/bin/env bash
# One device call for issue 17's version 4 (run from the exported tree's root on the GPU machine,
# logs to $OUT): install; the probe (check interval sweep: cost never raised, device-stamped
# latency); bench_sched's latency and service parts (gemm flood, preempting scheduler, several
# runs); then the preemption tests with what time is left. LIMIT: seconds for the whole call.
set -uo pipefail
LIMIT="${LIMIT:-225}"
export GPUKIT_TEST_BACKENDS=cuda PYTHONUNBUFFERED=1
left() { echo $((LIMIT - SECONDS)); }
TESTS=0 BENCH=none timeout 150 bash scripts/gpu_machine.sh run || { echo "install failed"; exit 1; }
echo "installed at ${SECONDS}s"
export PYTHONPATH=/tmp/gpukit-site
if [ "${PROBE:-1}" != 0 ]; then
    timeout "${PROBE_LIMIT:-50}" python3 notes/qos_kyield_probe.py >"$OUT/probe.txt" 2>&1
    echo "probe rc $? at ${SECONDS}s"
fi
BENCH_SCHED_PARTS="${BENCH_SCHED_PARTS:-latency,service}" \
    BENCH_SCHED_SERVICE_FLOODS="${BENCH_SCHED_SERVICE_FLOODS:-gemm}" \
    BENCH_SCHED_SERVICE_SCHEDS="${BENCH_SCHED_SERVICE_SCHEDS:-preempt}" \
    BENCH_SCHED_SERVICE_TORCH="${BENCH_SCHED_SERVICE_TORCH:-0}" \
    BENCH_SCHED_SERVICE_RUNS="${BENCH_SCHED_SERVICE_RUNS:-3}" \
    timeout "${BENCH_LIMIT:-75}" python3 benchmarks/bench_sched.py >"$OUT/bench_sched.txt" 2>&1
echo "bench rc $? at ${SECONDS}s"
t=$(left)
if [ "$t" -gt 20 ]; then
    timeout "$t" python3 -m pytest -v -rfE -p no:cacheprovider -n 4 --timeout 120 \
        --timeout-method=thread "$@" >"$OUT/tests.log" 2>&1
    echo "tests rc $? at ${SECONDS}s"
    grep -E "(FAILED|ERROR) tests/" "$OUT/tests.log" | sort -u | head -20
    tail -1 "$OUT/tests.log"
fi
cat "$OUT/probe.txt" 2>/dev/null | tail -45
grep -v "^\(gpukit\|backend\|device\|hip\|CUDA\|NVRTC\|HIP\|hiprtc\|compiler\|matmul\|preemption  \|green\|kernel cache\)" \
    "$OUT/bench_sched.txt" | tail -40
