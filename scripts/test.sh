#!/usr/bin/env bash
# The whole test suite: the Rust workspace, the official conformance suite
# against our fixture server, and the interop checks against MCP clients no
# one here wrote. On first run it installs what it needs (Node 22, the pinned
# npm packages, the Python SDK) into a cache outside the clone.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (workspace, all features)"
cargo test --workspace --all-features

echo "== conformance: the official suite against snodo-conformance (server leg)"
conformance/run.sh

echo "== conformance: the official suite driving snodo-conformance client (client leg)"
conformance/run-client.sh

echo "== interop: official clients against the demo server"
interop/run.sh

echo "== interop: our client against servers no one here wrote"
interop/client_interop.sh
