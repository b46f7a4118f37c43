#!/usr/bin/env python3
"""An MCP Apps server built with the official Python SDK (`mcp` 2.3.0, `mcp.server.apps`).

The second backend of the MCP Apps interop leg (interop/apps/run.sh): its app has the very
URI the snodo demo's app has (ui://demo/sum.html), so that `snodo proxy` must keep the two
apart. Serves over stdio:

    tools     add(a: int, b: int) -> str, bound to ui://demo/sum.html
    resource  ui://demo/sum.html (text/html;profile=mcp-app): a one-line page

Usage:
    python server.py
"""

from __future__ import annotations

from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer

PAGE = "<!doctype html><title>Python sum</title><p>the Python SDK's app</p>"

apps = Apps()


@apps.tool(resource_uri="ui://demo/sum.html", description="Adds two integers (Python)")
def add(a: int, b: int) -> str:
    return str(a + b)


apps.add_html_resource("ui://demo/sum.html", PAGE, name="python-sum", prefers_border=False)

mcp = MCPServer(name="snodo-interop-python-apps", extensions=[apps])

if __name__ == "__main__":
    mcp.run(transport="stdio")
