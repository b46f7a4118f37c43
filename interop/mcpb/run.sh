#!/usr/bin/env bash
# MCP Bundles: `snodo bundle` packs the demo server (the `snodo` binary with
# `demo --stdio`) into an .mcpb; the official MCP Bundle tools
# (@anthropic-ai/mcpb, pinned in interop/mcpb/package.json) unpack it and
# validate its manifest, the manifest validates against the vendored 0.3
# schema (checked to be the package's own, byte for byte) with the Python
# `jsonschema`, and the unpacked server, started as the manifest says,
# answers the official Python SDK's client over stdio.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=interop/lib.sh
source interop/lib.sh
mcpb="$(ensure_mcpb)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

out=$(run "$snodo" bundle "$snodo" --author "The snodo authors" --license "MIT OR Apache-2.0" \
    -o "$work/demo.mcpb" -- demo --stdio)
check "snodo bundle writes the bundle" "$work/demo.mcpb (" "$out"
want_sha=$(sha256sum "$work/demo.mcpb" | cut -c1-64)
check "snodo bundle prints the bundle's sha256" "sha256 $want_sha" "$out"

out=$(run "$mcpb" unpack "$work/demo.mcpb" "$work/unpacked")
check "mcpb unpack" "unpacked successfully" "$out"
out=$(run "$mcpb" validate "$work/unpacked/manifest.json")
check "mcpb validate" "Manifest schema validation passes" "$out"

schema=interop/mcpb/schemas/mcpb-manifest-v0.3.schema.json
out=$(run cmp "$schema" "$(dirname "$mcpb")/../@anthropic-ai/mcpb/schemas/mcpb-manifest-v0.3.schema.json" && echo same)
check "the vendored 0.3 schema is the package's, byte for byte" "same" "$out"
out=$(run "$python" - "$schema" "$work/unpacked/manifest.json" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
manifest = json.load(open(sys.argv[2]))
jsonschema.Draft7Validator(schema).validate(manifest)
assert manifest["manifest_version"] == "0.3", manifest
assert manifest["name"] == "snodo-demo", manifest
assert manifest["server"]["mcp_config"]["args"] == ["demo", "--stdio"], manifest
assert "greet" in [t["name"] for t in manifest["tools"]], manifest
print("valid against the 0.3 schema")
PY
)
check "the manifest against the vendored 0.3 schema" "valid against the 0.3 schema" "$out"

entry="$work/unpacked/server/snodo"
out=$(run test -x "$entry" && echo executable)
check "the unpacked server is executable" "executable" "$out"
out=$(run timeout 60 "$python" interop/python/client.py --stdio "$entry demo --stdio" \
    --call add --args '{"a":2,"b":40}')
check "python sdk: the unpacked server lists its tools" '"greet"' "$out"
check "python sdk: the unpacked server answers a call" '42' "$out"

echo "bundle-interop: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
