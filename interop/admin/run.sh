#!/usr/bin/env bash
# snodo proxy's admin page in a real headless Chromium: installs Debian's
# Chromium and the pinned playwright-core (scripts/tools.sh), starts
# `snodo proxy` on 127.0.0.1 with a pinned tool whose recorded hash differs
# from what its backend lists and a backend that is down, and runs
# interop/admin/admin_page.mjs against the page. Screenshots go to
# target/admin-page/.
#
#   interop/admin/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/tools.sh
source scripts/tools.sh

chromium="$(ensure_chromium)"
node_bin="$(ensure_node22)"
admin_dir="$(ensure_playwright)"
cargo build --quiet --all-features --bin snodo
snodo="$PWD/target/debug/snodo"
shots="$PWD/target/admin-page"
mkdir -p "$shots"

work="$(mktemp -d)"
proxy_pid=""
cleanup() {
    [[ -n "$proxy_pid" ]] && kill "$proxy_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A port nothing listens on: that backend stays down.
dead_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$work/proxy.toml" <<TOML
pin = true
[auth]
issuer = "http://127.0.0.1:9"
admin_token = "\${SNODO_ADMIN_TOKEN}"
[backends.demo]
command = ["$snodo", "demo", "--stdio"]
stderr = "quiet"
[backends.gone]
url = "http://127.0.0.1:$dead_port/mcp"
connect_timeout = 1
TOML
# The pin recorded for demo.add is not what the demo lists: a change that
# waits for approval.
cat >"$work/proxy.pins.json" <<JSON
{"version": 1, "pins": {"tool:demo.add": {"hash": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}}}
JSON

token="an-admin-token-for-the-page-test"
SNODO_ADMIN_TOKEN="$token" "$snodo" proxy --http 127.0.0.1:0 "$work/proxy.toml" \
    >"$work/url" 2>"$work/stderr" &
proxy_pid=$!
for _ in $(seq 1 100); do
    [[ -s "$work/url" ]] && break
    sleep 0.1
done
url="$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["url"])' "$work/url")"
base="${url%/mcp}"

(cd "$admin_dir" && CHROMIUM="$chromium" timeout 120 "$node_bin/node" admin_page.mjs "$base" "$token" "$shots")
