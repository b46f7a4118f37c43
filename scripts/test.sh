#!/usr/bin/env bash
# The whole test suite: the Rust workspace, the official conformance suite
# (server and client legs), and the interop checks against MCP clients and
# servers no one here wrote. On first run it installs what it needs (Node 22,
# the pinned npm packages, the Python SDK) into a cache outside the clone.
# The last line totals every check that ran.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
leg() { # leg TITLE COMMAND...
    echo "== $1"
    shift
    "$@" 2>&1 | tee -a "$log"
}

leg "cargo test (every crate but the bench harness, all features)" cargo test --all-features
leg "conformance: the official suite against snodo-conformance (server leg)" conformance/run.sh
leg "conformance: the official suite driving snodo-conformance client (client leg)" conformance/run-client.sh
leg "interop: official clients against the demo server" interop/run.sh
leg "interop: our client against servers no one here wrote" interop/client_interop.sh

python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
passed = failed = 0
for p, f in re.findall(r"^test result: \w+\. (\d+) passed; (\d+) failed", text, re.M):
    passed, failed = passed + int(p), failed + int(f)
for p, f in re.findall(r"^(?!Total:)[\w-]+: (\d+) passed, (\d+) failed(?:, \d+ warnings)?$", text, re.M):
    passed, failed = passed + int(p), failed + int(f)
print(f"total: {passed} passed, {failed} failed")
PY
