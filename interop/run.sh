#!/usr/bin/env bash
# Interop: MCP clients no one here wrote list and call the demo server over
# stdio and Streamable HTTP, in both protocol eras: the official Python SDK
# (2026-07-28, and the initialize era with --mode legacy), MCP Inspector v2
# (modern, and its default legacy era), the official TypeScript SDK v1
# client, which speaks only the initialize era, and the v2 client
# (2026-07-28) (interop/node/ts_v1_client.mjs and ts_v2_client.mjs run their
# own checks and print `<label>: N passed, M failed`); then both TypeScript
# clients through a balancer in front of three demo nodes. Every check
# compares the client's output with the expected answer; any mismatch fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=interop/lib.sh
source interop/lib.sh

# --- stdio ---------------------------------------------------------------
out=$(run timeout 60 "$python" interop/python/client.py --stdio "$snodo demo --stdio" \
    --mode 2026-07-28 --call greet --args '{"name":"Ada"}')
check "python sdk, stdio: list" '"greet"' "$out"
check "python sdk, stdio: call greet" 'Hello, Ada!' "$out"
out=$(run timeout 60 "$python" interop/python/client.py --stdio "$snodo demo --stdio" \
    --call add --args '{"a":2,"b":40}')
check "python sdk, stdio (auto-negotiated): structured add" '"sum": 42' "${out//\"sum\":42/\"sum\": 42}"
out=$(run timeout 60 "$python" interop/python/client.py --stdio "$snodo demo --stdio" \
    --mode legacy --expect-protocol 2025-11-25 --call add --args '{"a":1,"b":2}')
check "python sdk, stdio, initialize era: structured add" '"sum": 3' "${out//\"sum\":3/\"sum\": 3}"
out=$(run timeout 60 interop/inspector.sh --era legacy list --stdio "$snodo" demo --stdio)
check "inspector, stdio, initialize era: list" '"confirm_delete"' "$out"
out=$(run timeout 60 interop/inspector.sh --era legacy call --stdio "$snodo" demo --stdio -- greet name=Linus)
check "inspector, stdio, initialize era: call greet" 'Hello, Linus!' "$out"
ts_client ts_v1_client.mjs ts-sdk-v1-stdio --stdio "$snodo demo --stdio"
ts_client ts_v2_client.mjs ts-sdk-v2-stdio --stdio "$snodo demo --stdio"
out=$(run timeout 60 interop/inspector.sh list --stdio "$snodo" demo --stdio)
check "inspector, stdio: list" '"lookup"' "$out"
out=$(run timeout 60 interop/inspector.sh call --stdio "$snodo" demo --stdio -- lookup word=mcp)
check "inspector, stdio: call lookup" 'Model Context Protocol' "$out"

# --- Streamable HTTP -------------------------------------------------------
fifo=$(mktemp -u); mkfifo "$fifo"
"$snodo" demo --http 127.0.0.1:0 >"$fifo" &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true; rm -f "$fifo"' EXIT
read -r -t 30 line <"$fifo"
url=$(printf '%s' "$line" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
[[ -n "$url" ]] || { echo "demo server did not print its url: $line"; exit 1; }
echo "demo server at $url"

out=$(run timeout 60 "$python" interop/python/client.py --http "$url" --call greet --args '{"name":"Grace"}')
check "python sdk, http: call greet" 'Hello, Grace!' "$out"
out=$(run timeout 60 "$python" interop/python/client.py --http "$url" --call lookup --args '{"word":"zzz"}' --allow-tool-error)
check "python sdk, http: domain failure is isError" '"isError": true' "${out//\"isError\":true/\"isError\": true}"
out=$(run timeout 60 "$python" interop/python/client.py --http "$url" --call count --args '{"to":3}' --progress)
check "python sdk, http: progress notifications" '"step": "progress"' "${out//\"step\":\"progress\"/\"step\": \"progress\"}"
check "python sdk, http: call after progress" 'Counted to 3' "$out"
out=$(run timeout 60 "$python" interop/python/client.py --http "$url" --mode legacy \
    --expect-protocol 2025-11-25 --call greet --args '{"name":"Barbara"}')
check "python sdk, http, initialize era: call greet" 'Hello, Barbara!' "$out"
out=$(run timeout 60 interop/inspector.sh --era legacy call "$url" lookup word=rust)
check "inspector, http, initialize era: call lookup" 'reliable and efficient' "$out"
ts_client ts_v1_client.mjs ts-sdk-v1-http --http "$url"
ts_client ts_v2_client.mjs ts-sdk-v2-http --http "$url"
out=$(run timeout 60 interop/inspector.sh list "$url")
check "inspector, http: list" '"greet"' "$out"
out=$(run timeout 60 interop/inspector.sh call "$url" add a=2 b=3)
check "inspector, http: call add" '"sum":5' "${out//\"sum\": 5/\"sum\":5}"

# --- the conformance fixture, which also serves listen streams -------------
# The features the test leg builds with, so that its artifacts are reused.
cargo build --quiet --all-features --bin snodo-conformance
coproc FIXTURE { exec "$PWD/target/debug/snodo-conformance" server --port 0; }
fixture_pid=$FIXTURE_PID
trap 'kill $server_pid $fixture_pid 2>/dev/null || true; rm -f "$fifo"' EXIT
read -r -t 30 line <&"${FIXTURE[0]}"
furl=$(printf '%s' "$line" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
out=$(run timeout 60 interop/inspector.sh list "$furl")
check "inspector, http: list the conformance fixture" '"test_simple_text"' "$out"
out=$(run timeout 60 interop/inspector.sh call "$furl" test_simple_text)
check "inspector, http: call a fixture tool" 'This is a simple text response for testing.' "$out"

# --- several nodes: both TypeScript clients through a round-robin balancer
# in front of three demo nodes joined by Redis (the test prints the clients'
# own lines and its `test result`, which the suite totals).
status=0
cargo test --quiet --all-features --test nodes_interop -- --ignored --nocapture || status=$?
[[ $status -eq 0 ]] || { fail=$((fail + 1)); echo "FAIL the TypeScript clients through the balancer (exit $status)"; }

echo "server-interop: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
