#!/usr/bin/env bash
# The bridge: `snodo serve` between MCP clients and servers no one here wrote,
# translating the revisions both ways:
#   - the official TypeScript SDK v1 client (2025-11-25 only) through
#     `snodo serve --stdio` and `--http` to the official Python SDK's server
#     (2026-07-28; over stdio, and over Streamable HTTP): list, call, a
#     structured result, isError, an unknown tool, progress, an elicitation
#     (an input_required answer turned into elicitation/create), a read, a
#     prompt (interop/node/bridge_ts_v1_python.mjs);
#   - the official TypeScript SDK v2 client (2026-07-28) through
#     `snodo serve --http` and `--stdio` to @modelcontextprotocol/server-everything
#     over stdio (initialize era), including its sampling and elicitation
#     requests (interop/node/bridge_ts_v2_everything.mjs);
#   - MCP Inspector v2 (both eras) and the Python SDK's client (2026-07-28)
#     through the same bridge to server-everything;
#   - `snodo proxy` with the demo (a URL) and server-everything (stdio)
#     behind it, through the TypeScript SDK v2 client: names namespaced, a
#     call routed to each, the demo killed (list_changed, its tools
#     withdrawn) and started again (restored) (interop/node/proxy_ts_v2.mjs);
#   - `snodo proxy` with the Python SDK's server over the 2024-11-05 HTTP+SSE
#     transport (`transport = "sse"`) behind it, through `snodo` and the
#     Python SDK's client: listed, called (with progress), read;
#   - the bad cases: a target that never starts, or that is not an MCP server.
# Each client script prints `<label>: N passed, M failed`; this script prints
# its own checks' line and fails on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=interop/lib.sh
source interop/lib.sh
pyserver="$python $PWD/interop/python/server.py"

pids=()
dir=$(mktemp -d)
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
url=""
start() { # start NAME COMMAND...: runs it in the background, sets $url from its first line
    local name=$1; shift
    "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
    pids+=($!)
    for _ in $(seq 1 300); do
        url=$(sed -n '1s/.*"url": *"\([^"]*\)".*/\1/p' "$dir/$name.out")
        [[ -n "$url" ]] && return 0
        sleep 0.1
    done
    echo "FAIL $name printed no url:"; cat "$dir/$name.err" | head -20
    return 1
}

# --- TypeScript SDK v1 -> snodo serve -> Python SDK (2026-07-28) ----------
ts_client bridge_ts_v1_python.mjs bridge-ts-v1-stdio-python-stdio \
    --stdio "$snodo serve --stdio -- $pyserver --stdio"
start bridge-py-http "$snodo" serve --http 127.0.0.1:0 -- $pyserver --stdio
ts_client bridge_ts_v1_python.mjs bridge-ts-v1-http-python-stdio --http "$url"
start python-http $pyserver --http 0
python_url=$url
start bridge-to-python-http "$snodo" serve --http 127.0.0.1:0 "$python_url"
ts_client bridge_ts_v1_python.mjs bridge-ts-v1-http-python-http --http "$url"

# --- TypeScript SDK v2 (2026-07-28) -> snodo serve -> server-everything ---
start bridge-everything "$snodo" serve --http 127.0.0.1:0 --server-stderr quiet -- $everything
ts_client bridge_ts_v2_everything.mjs bridge-ts-v2-http-everything-stdio --http "$url"
everything_url=$url
# MCP Inspector v2 (both eras) and the Python SDK's client (2026-07-28) on the same bridge.
out=$(run timeout 60 interop/inspector.sh list "$everything_url")
check "inspector (2026-07-28) through the bridge: list" '"get-sum"' "$out"
out=$(run timeout 60 interop/inspector.sh call "$everything_url" get-sum a=2 b=3)
check "inspector (2026-07-28) through the bridge: call" 'The sum of 2 and 3 is 5.' "$out"
out=$(run timeout 60 interop/inspector.sh --era legacy call "$everything_url" echo message=legacy)
check "inspector (initialize era) through the bridge: call" 'Echo: legacy' "$out"
out=$(run timeout 60 "$python" interop/python/client.py --http "$everything_url" --call get-sum --args '{"a":20,"b":22}')
check "python sdk (2026-07-28) through the bridge: call" 'The sum of 20 and 22 is 42.' "$out"
ts_client bridge_ts_v2_everything.mjs bridge-ts-v2-stdio-everything-stdio \
    --stdio "$snodo serve --stdio --server-stderr quiet -- $everything"

# --- snodo proxy: the demo (URL) and server-everything (stdio) as one -----
start demo-http "$snodo" demo --http 127.0.0.1:0
demo_pid=${pids[-1]}
demo_url=$url
cat >"$dir/proxy.toml" <<TOML
health_interval = 0.3
[backends.demo]
url = "$demo_url"
[backends.everything]
command = "$everything"
stderr = "quiet"
TOML
start proxy "$snodo" proxy --http 127.0.0.1:0 "$dir/proxy.toml"
proxy_url=$url
ts_client proxy_ts_v2.mjs proxy-ts-v2-both --http "$proxy_url" --expect both
# The client listens, kills the demo, and sees list_changed and the withdrawal.
ts_client proxy_ts_v2.mjs proxy-ts-v2-demo-down --http "$proxy_url" --expect withdrawn --kill "$demo_pid"
wait "$demo_pid" 2>/dev/null || true
demo_addr=${demo_url#http://}
start demo-again "$snodo" demo --http "${demo_addr%/mcp}"
for _ in $(seq 1 100); do
    grep -c "backend demo: up" "$dir/proxy.err" | grep -q 2 && break
    sleep 0.1
done
ts_client proxy_ts_v2.mjs proxy-ts-v2-demo-back --http "$proxy_url" --expect both

# --- snodo proxy: an HTTP+SSE (2024-11-05) backend -------------------------
start python-sse $pyserver --sse 0
cat >"$dir/proxy-sse.toml" <<TOML
[backends.old]
url = "$url"
transport = "sse"
TOML
start proxy-sse "$snodo" proxy --http 127.0.0.1:0 "$dir/proxy-sse.toml"
sse_proxy_url=$url
out=$(run timeout 60 "$snodo" tools "$sse_proxy_url")
check "proxy to an HTTP+SSE backend: its tools listed" "old.count" "$out"
out=$(run timeout 60 "$snodo" call "$sse_proxy_url" old.count n=2)
check "proxy to an HTTP+SSE backend: a call's progress" "progress: 2/2 step 2 of 2" "$out"
check "proxy to an HTTP+SSE backend: a call's result" "counted to 2" "$out"
out=$(run timeout 60 "$snodo" read "$sse_proxy_url" old+interop://greeting)
check "proxy to an HTTP+SSE backend: a read" "Hello from the Python SDK" "$out"
out=$(run timeout 60 "$python" interop/python/client.py --http "$sse_proxy_url" --call old.add --args '{"a":20,"b":22}')
check "python sdk (2026-07-28) through the proxy to an HTTP+SSE backend: call" '42' "$out"

# --- bad targets ------------------------------------------------------------
status=0
out=$(timeout 30 "$snodo" serve --stdio -- /nonexistent/mcp-server 2>&1 </dev/null) || status=$?
check "a target that never starts: exit 1" "exit 1" "exit $status"
check "a target that never starts: the error names it" "/nonexistent/mcp-server" "$out"
status=0
out=$(timeout 30 "$snodo" serve --stdio -- sh -c 'echo not-json; sleep 5' 2>&1 </dev/null) || status=$?
check "a target that writes garbage: exit 1" "exit 1" "exit $status"
check "a target that writes garbage: a clear error" "cannot serve" "$out"

echo "bridge-interop: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
