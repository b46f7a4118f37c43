#!/usr/bin/env bash
# Client interop: the `snodo` CLI (snodo's client) against MCP servers no one
# here wrote:
#   - the official Python SDK (`mcp` 2.3.0, MCPServer, interop/python/server.py)
#     over stdio and Streamable HTTP, on 2026-07-28;
#   - @modelcontextprotocol/server-everything (npm, SDK v1, initialize-era)
#     over stdio, reached through the client's fallback to `initialize`.
# Each check lists, calls (one call reports progress), reads, gets a prompt,
# and compares the CLI's output and exit code with the expected ones. Prints
# "N passed, M failed" and fails on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh

# The features the test leg builds with, so that its artifacts are reused.
cargo build --quiet --all-features --bin snodo
snodo="$PWD/target/debug/snodo"
python="$(ensure_python_mcp)"
node_bin="$(ensure_node22)"
ensure_inspector >/dev/null
everything="$node_bin/node $PWD/interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio"

pass=0
fail=0
out=""
rc=0
# run ARGS...: runs the CLI, capturing stdout+stderr in $out and the exit code in $rc.
run() {
    rc=0
    out=$(timeout 60 "$snodo" "$@" --server-stderr quiet 2>&1) || rc=$?
}
check() { # check NAME EXPECTED-RC EXPECTED-SUBSTRING
    if [[ $rc -eq $2 && "$out" == *"$3"* ]]; then
        pass=$((pass + 1)); echo "ok   $1"
    else
        fail=$((fail + 1)); echo "FAIL $1: expected exit $2 and to find $3; got exit $rc:"
        echo "$out" | head -20
    fi
}

suite() { # suite LABEL TARGET
    local label=$1 target=$2
    run discover "$target"
    check "python $label: discover negotiates 2026-07-28" 0 "Protocol: 2026-07-28 (modern)"
    run tools "$target"
    check "python $label: list tools" 0 "count"
    run call "$target" add a=2 b=40 --json
    check "python $label: call add" 0 '"text": "42"'
    run call "$target" count n=3
    check "python $label: call with progress (result)" 0 "counted to 3"
    check "python $label: call with progress (updates)" 0 "progress: 3/3 step 3 of 3"
    run call "$target" add a=2 b=x
    check "python $label: isError result exits 1" 1 "validation error"
    run resources "$target"
    check "python $label: list resources" 0 "interop://greeting"
    run read "$target" interop://greeting
    check "python $label: read a resource" 0 "Hello from the Python SDK"
    run prompts "$target"
    check "python $label: list prompts" 0 "summarize"
    run prompt "$target" summarize topic=Rust
    check "python $label: get a prompt" 0 "Please summarize Rust in one paragraph."
}

# --- the Python SDK over stdio ------------------------------------------------
suite stdio "$python interop/python/server.py --stdio"

# --- the Python SDK over Streamable HTTP ---------------------------------------
fifo=$(mktemp -u)
mkfifo "$fifo"
"$python" interop/python/server.py --http 0 >"$fifo" &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true; rm -f "$fifo"' EXIT
read -r -t 60 line <"$fifo"
url=$(printf '%s' "$line" | sed -n 's/.*"url": *"\([^"]*\)".*/\1/p')
[[ -n "$url" ]] || { echo "the Python server did not print its url: $line"; exit 1; }
echo "python server at $url"
suite http "$url"
run read "$url" interop://nope
check "python http: unknown resource is a JSON-RPC error (exit 3)" 3 "(-32602)"
run tools "http://127.0.0.1:1/mcp"
check "connection refused exits 4" 4 "cannot reach"

# --- server-everything (initialize-era) over stdio -----------------------------
run discover "$everything"
check "everything stdio: falls back to initialize" 0 "Protocol: 2025-11-25 (initialize-era)"
run tools "$everything"
check "everything stdio: list tools" 0 "get-sum"
run call "$everything" get-sum a=2 b=3
check "everything stdio: call get-sum" 0 "The sum of 2 and 3 is 5."
run call "$everything" trigger-long-running-operation duration=1 steps=3
check "everything stdio: call with progress (result)" 0 "Long running operation completed"
check "everything stdio: call with progress (updates)" 0 "progress: 3/3"
run call "$everything" trigger-elicitation-request --accept-defaults
check "everything stdio: server-initiated elicitation answered" 0 '"action": "accept"'
run resources "$everything"
check "everything stdio: list resources" 0 "architecture.md"
run read "$everything" demo://resource/static/document/architecture.md
check "everything stdio: read a resource" 0 "Architecture"
run prompts "$everything"
check "everything stdio: list prompts" 0 "args-prompt"
run prompt "$everything" args-prompt city=Paris
check "everything stdio: get a prompt" 0 "Paris"
run complete "$everything" prompt:completable-prompt department=E
check "everything stdio: complete an argument" 0 "Engineering"

echo "client-interop: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
