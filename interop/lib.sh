# What the interop scripts share (source it): the pass/fail counters, one
# check of an expected substring, and the run of a Node client script whose
# own closing `<label>: N passed, M failed` line the test suite totals.
# shellcheck shell=bash

pass=0
fail=0

check() { # check NAME EXPECTED-SUBSTRING OUTPUT
    if [[ "$3" == *"$2"* ]]; then
        pass=$((pass + 1)); echo "ok   $1"
    else
        fail=$((fail + 1)); echo "FAIL $1: expected to find $2 in:"; echo "$3" | head -20
    fi
}

ts_client() { # ts_client SCRIPT LABEL ARGS... (run in interop/node)
    local script=$1 label=$2; shift 2
    local status=0
    (cd "$(dirname "${BASH_SOURCE[0]}")/node" && timeout 120 node "$script" "$@" --label "$label") || status=$?
    [[ $status -eq 0 ]] || { fail=$((fail + 1)); echo "FAIL $label exited $status"; }
    return 0
}
