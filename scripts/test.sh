#!/usr/bin/env bash
# The whole test suite: the Rust workspace, then the interop checks against
# MCP clients no one here wrote. Installs what it needs (Node 22, the pinned
# npm packages, the Python SDK) into a cache outside the clone on first run.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (workspace, all features)"
cargo test --workspace --all-features

if [ -x interop/run.sh ]; then
  echo "== interop: official clients against the demo server"
  interop/run.sh
fi
