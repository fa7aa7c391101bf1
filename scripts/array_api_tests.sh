#!/usr/bin/env bash
# Runs the Array API test suite (data-apis/array-api-tests) against gpukit: version 2023.12,
# without the linalg and fft extensions (EXTENSIONS=1: only their tests, test_linalg.py and
# test_fft.py), on GPUKIT_BACKEND (default cpu), and prints the pass rate and the failures
# grouped by test. Not part of CI.
#
#   scripts/array_api_tests.sh CHECKOUT [pytest arguments...]
#
# CHECKOUT is a clone of array-api-tests with its `array-api` submodule (the spec's stubs)
# checked out (git clone --recursive). It is copied to a temporary folder first and left as it
# is. MAX_EXAMPLES (default 20) bounds hypothesis' examples per test. Runs $PYTHON (default
# .venv's, from scripts/setup.sh test) and installs the suite's requirements into it when missing
# (GPUKIT_BACKEND=cuda on the GPU machine: PYTHON=python3, requirements installed beforehand).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -d "$1/array_api_tests" ]; then
    echo "usage: $0 ARRAY_API_TESTS_CHECKOUT [pytest args...]" >&2
    exit 2
fi
checkout=$(cd "$1" && pwd)
shift
if [ ! -d "$checkout/array-api/src/array_api_stubs" ]; then
    echo "$checkout/array-api is empty: run 'git submodule update --init' in the checkout" >&2
    exit 2
fi
python=${PYTHON:-$PWD/.venv/bin/python}
if ! "$python" -c "import hypothesis, ndindex, pytest_jsonreport" 2>/dev/null; then
    "$python" -m pip install --quiet -r "$checkout/requirements.txt"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$checkout" "$work/suite"
skip_dtypes=""
if ! "$python" -c "import gpukit, sys; sys.exit(not hasattr(gpukit, 'complex64'))"; then
    # gpukit has no complex dtypes yet: tell the suite, and let its dtype helpers load without
    # any (they take the widest complex dtype of an empty list otherwise).
    skip_dtypes=complex64,complex128
    sed -i 's/key=lambda x: x\[1\]$/key=lambda x: x[1], default=(None,)/' \
        "$work/suite/array_api_tests/dtype_helpers.py"
fi

cd "$work/suite"
if [ "${EXTENSIONS:-0}" = 1 ]; then
    selection=(array_api_tests/test_linalg.py array_api_tests/test_fft.py)
else
    selection=(array_api_tests --disable-extension linalg fft
        -k "not (test_has_names and (linalg or fft))")
fi
status=0
GPUKIT_BACKEND=${GPUKIT_BACKEND:-cpu} ARRAY_API_TESTS_MODULE=gpukit \
    ARRAY_API_TESTS_VERSION=2023.12 ARRAY_API_TESTS_SKIP_DTYPES=$skip_dtypes \
    "$python" -m pytest "${selection[@]}" -q -p no:cacheprovider \
    --max-examples "${MAX_EXAMPLES:-20}" --disable-deadline \
    --json-report --json-report-file="$work/report.json" "$@" >"$work/log" 2>&1 || status=$?
tail -n 1 "$work/log"
"$python" - "$work/report.json" <<'EOF'
import collections
import json
import sys

tests = json.load(open(sys.argv[1]))["tests"]
outcomes = collections.Counter(t["outcome"] for t in tests)
ran = outcomes["passed"] + outcomes["failed"]
print(
    f"passed {outcomes['passed']} of {len(tests)} tests ({100 * outcomes['passed'] / len(tests):.1f}%), "
    f"of those that ran {100 * outcomes['passed'] / max(ran, 1):.1f}%; skipped {outcomes['skipped']}"
)
groups = collections.Counter(
    t["nodeid"].split("[")[0].removeprefix("array_api_tests/") for t in tests if t["outcome"] == "failed"
)
for group, count in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"  {count:4d} failed  {group}")
EOF
exit $status
