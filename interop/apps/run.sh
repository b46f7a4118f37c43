#!/usr/bin/env bash
# MCP Apps: the official Python SDK's client (`mcp` 2.3.0, declaring
# `io.modelcontextprotocol/ui` as an apps host does, interop/apps/host.py)
# lists the demo's tools, finds `add`'s app, reads the `ui://` resource and
# gets its HTML; the tool's and the app's `_meta.ui` validate against the
# schema the ext-apps package (@modelcontextprotocol/ext-apps 2.0.4)
# publishes, vendored in interop/apps/schemas and compared byte for byte
# with the package's own. The same client without the extension sees `add`
# without `_meta.ui`, no app, and the sum as text. Through `snodo proxy`, the
# demo and a Python SDK apps server (interop/apps/server.py) whose app has
# the very same URI keep two distinct `ui://` URIs, each reading its own app.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=interop/lib.sh
source interop/lib.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
schema=interop/apps/schemas/ext-apps-2.0.4.schema.json
host() { run timeout 120 "$python" interop/apps/host.py "$@"; }

# The vendored schema is the package's own.
(cd "$work" && npm pack --silent @modelcontextprotocol/ext-apps@2.0.4 >/dev/null && tar xzf ./*.tgz)
if cmp -s "$schema" "$work/package/dist/src/generated/schema.json"; then out=same; else out=differs; fi
check "the vendored schema is ext-apps 2.0.4's own" "same" "$out"

# A host with MCP Apps, over stdio and over Streamable HTTP.
out=$(host --apps --schema "$schema" --call add --args '{"a":2,"b":40}' --stdio "$snodo demo --stdio")
check "apps host, stdio: add names its app" '"add":{"ui":{"resourceUri":"ui://demo/sum.html"}}' "$out"
check "apps host, stdio: the app is listed" '"ui://demo/sum.html":"text/html;profile=mcp-app"' "$out"
check "apps host, stdio: the app's HTML" '"html":"<!doctype html>' "$out"
check "apps host, stdio: the whole app, byte for byte" \
    "\"sha256\":\"$(sha256sum crates/snodo-cli/src/demo_app.html | cut -c1-64)\"" "$out"
check "apps host, stdio: the app's _meta.ui" '"ui":{"prefersBorder":true}' "$out"
check "apps host, stdio: the tool and app _meta validate" '"step":"schema","checked":3' "$out"
check "apps host, stdio: the call's structured sum" '"structuredContent":{"sum":42}' "$out"

fifo="$work/fifo"; mkfifo "$fifo"
"$snodo" demo --http 127.0.0.1:0 >"$fifo" &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT
read -r -t 30 line <"$fifo"
url=$(printf '%s' "$line" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
out=$(host --apps --schema "$schema" --http "$url")
check "apps host, http: add names its app" '"resourceUri":"ui://demo/sum.html"' "$out"
check "apps host, http: the tool and app _meta validate" '"step":"schema","checked":3' "$out"

# A host without the extension: the tool without its binding, no app, text.
out=$(host --call add --args '{"a":2,"b":40}' --stdio "$snodo demo --stdio")
check "plain host: add without _meta.ui" '"add":{"ui":null}' "$out"
check "plain host: no app listed" '"resources":{"demo://readme":"text/markdown"}' "$out"
check "plain host: the sum as text" '"text":"{\"sum\":42}"' "$out"
out=$(host --http "$url")
check "plain host, http: add without _meta.ui" '"add":{"ui":null}' "$out"

# Through snodo proxy: two backends' apps at the same URI stay apart.
cat >"$work/proxy.toml" <<TOML
[backends.demo]
command = ["$snodo", "demo", "--stdio"]
[backends.py]
command = ["$python", "$PWD/interop/apps/server.py"]
stderr = "quiet"
TOML
out=$(host --apps --schema "$schema" --stdio "$snodo proxy --stdio $work/proxy.toml")
check "proxy: the demo's app" '"demo.add":{"ui":{"resourceUri":"ui://demo/demo/sum.html"}}' "$out"
check "proxy: the Python app" '"py.add":{"ui":{"resourceUri":"ui://py/demo/sum.html"}}' "$out"
check "proxy: the demo's app reads the demo's page" '"uri":"ui://demo/demo/sum.html","mimeType":"text/html;profile=mcp-app","ui":{"prefersBorder":true},"html":"<!doctype html>' "$out"
check "proxy: the Python app reads the Python page" "\"uri\":\"ui://py/demo/sum.html\",\"mimeType\":\"text/html;profile=mcp-app\",\"ui\":{\"prefersBorder\":false},\"html\":\"<!doctype html><title>Python sum</title>" "$out"
check "proxy: everything validates" '"step":"schema","checked":6' "$out"
out=$(host --stdio "$snodo proxy --stdio $work/proxy.toml")
check "proxy, plain host: no binding" '"demo.add":{"ui":null}' "$out"
check "proxy, plain host: none for the Python tool either" '"py.add":{"ui":null}' "$out"
[[ "$out" != *'ui://'* ]] && check "proxy, plain host: no ui:// anywhere" ok ok || check "proxy, plain host: no ui:// anywhere" "no ui://" "$out"

echo "apps: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
