# What the interop scripts share (source it from the repository's root):
# the tools installed (Node 22 first on PATH, the pinned npm packages, the
# Python SDK) and the `snodo` binary built, the pass/fail counters, one
# check of an expected substring, a command run with its output kept, and
# the run of a Node client script whose own closing
# `<label>: N passed, M failed` line the test suite totals.
# shellcheck shell=bash

# shellcheck source=scripts/tools.sh
source scripts/tools.sh

# The features the test leg builds with, so that its artifacts are reused.
cargo build --quiet --all-features --bin snodo
snodo="$PWD/target/debug/snodo"
python="$(ensure_python_mcp)"
ensure_inspector >/dev/null
PATH="$(ensure_node22):$PATH"
export PATH
everything="node $PWD/interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio"

pass=0
fail=0

check() { # check NAME EXPECTED-SUBSTRING OUTPUT
    if [[ "$3" == *"$2"* ]]; then
        pass=$((pass + 1)); echo "ok   $1"
    else
        fail=$((fail + 1)); echo "FAIL $1: expected to find $2 in:"; echo "$3" | head -20
    fi
}

run() { "$@" 2>&1 || true; }

ts_client() { # ts_client SCRIPT LABEL ARGS... (run in interop/node)
    local script=$1 label=$2; shift 2
    local status=0
    (cd "$(dirname "${BASH_SOURCE[0]}")/node" && timeout 120 node "$script" "$@" --label "$label") || status=$?
    [[ $status -eq 0 ]] || { fail=$((fail + 1)); echo "FAIL $label exited $status"; }
    return 0
}
