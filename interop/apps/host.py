#!/usr/bin/env python3
"""An MCP Apps host made of the official Python SDK's client (`mcp` 2.3.0).

With --apps it declares the extension as a host that renders apps does
(`io.modelcontextprotocol/ui` with mimeTypes ["text/html;profile=mcp-app"], through the
SDK's `advertise`); without it, it is a host that knows nothing of apps. It lists the
server's tools and resources, reads the app of every tool that names one (`_meta.ui
.resourceUri`), optionally calls a tool, and prints one compact JSON object per step:

    {"step":"tools","tools":{"<name>":{"ui":<_meta.ui or null>}, ...}}
    {"step":"resources","resources":{"<uri>":"<mimeType>", ...}}
    {"step":"app","tool":"<name>","uri":"ui://...","mimeType":"...","ui":<_meta.ui>,"html":"<first 200 chars>","bytes":N,"sha256":"<hex>"}
    {"step":"call","name":"...","text":"<text content>","structuredContent":...}
    {"step":"schema","checked":N}

With --schema FILE (the ext-apps package's generated schema.json) every tool's `_meta.ui`
is validated against its McpUiToolMeta and every app's `_meta.ui` (listing and content)
against McpUiResourceMeta; an app must be served as text/html;profile=mcp-app. Any failure
prints {"step":"error",...} and exits 1.

Usage:
    python host.py [--apps] [--schema FILE] [--call NAME --args JSON] (--stdio "CMD" | --http URL)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
from typing import Any

import anyio
import httpx2
import jsonschema
from mcp.client import Client
from mcp.client.extension import advertise
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID


def emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj, separators=(",", ":")), flush=True)


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json") if model is not None else None


class Validator:
    def __init__(self, path: str | None) -> None:
        self.checked = 0
        self.schema: dict[str, Any] | None = None
        if path:
            with open(path, encoding="utf-8") as f:
                self.schema = json.load(f)

    def check(self, definition: str, value: Any, where: str) -> None:
        if self.schema is None:
            return
        doc = {"$ref": f"#/$defs/{definition}", "$defs": self.schema["$defs"]}
        errors = sorted(jsonschema.Draft202012Validator(doc).iter_errors(value), key=str)
        if errors:
            raise RuntimeError(f"{where}: not a valid {definition}: {errors[0].message}")
        self.checked += 1


async def run(ns: argparse.Namespace) -> None:
    extensions = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})] if ns.apps else None
    if ns.http:
        http = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), trust_env=False)
        target: Any = streamable_http_client(ns.http, http_client=http)
    else:
        command, *args = shlex.split(ns.stdio)
        target = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    validator = Validator(ns.schema)
    async with Client(target, extensions=extensions) as client:
        tools = (await client.list_tools()).tools
        listed = {}
        for tool in tools:
            meta = tool.meta or {}
            ui = meta.get("ui")
            if ui is not None:
                validator.check("McpUiToolMeta", ui, f"tool {tool.name} _meta.ui")
            listed[tool.name] = {"ui": ui}
        emit({"step": "tools", "tools": listed})
        resources = (await client.list_resources()).resources
        emit({"step": "resources", "resources": {str(r.uri): r.mime_type for r in resources}})
        for r in resources:
            ui = (r.meta or {}).get("ui")
            if ui is not None:
                validator.check("McpUiResourceMeta", ui, f"resource {r.uri} _meta.ui")
        for name, entry in listed.items():
            uri = (entry["ui"] or {}).get("resourceUri")
            if not uri:
                continue
            read = dump(await client.read_resource(uri))
            item = read["contents"][0]
            if item.get("mimeType") != APP_MIME_TYPE:
                raise RuntimeError(f"{uri} is served as {item.get('mimeType')!r}")
            ui = (item.get("_meta") or {}).get("ui")
            if ui is not None:
                validator.check("McpUiResourceMeta", ui, f"{uri} content _meta.ui")
            html = item["text"].encode()
            emit({"step": "app", "tool": name, "uri": uri, "mimeType": item["mimeType"], "ui": ui,
                  "html": item["text"][:200], "bytes": len(html), "sha256": hashlib.sha256(html).hexdigest()})
        if ns.call:
            result = dump(await client.call_tool(ns.call, json.loads(ns.args)))
            text = "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
            emit({"step": "call", "name": ns.call, "text": text,
                  "structuredContent": result.get("structuredContent")})
        if ns.schema:
            emit({"step": "schema", "checked": validator.checked})


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio")
    where.add_argument("--http")
    p.add_argument("--apps", action="store_true")
    p.add_argument("--schema")
    p.add_argument("--call")
    p.add_argument("--args", default="{}")
    ns = p.parse_args()
    try:
        anyio.run(run, ns)
    except BaseException as e:  # noqa: BLE001 - every failure is reported the same way
        emit({"step": "error", "error": type(e).__name__, "message": str(e)})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
