"""A stdio MCP server (initialize-era) for the tests of backends started per caller:
`whoami` answers "WHO|TEAMS|pid" from its environment, `quit` exits."""

import json, os, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, rid = msg.get("method"), msg["id"]
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "who", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("whoami", "quit")]}
    elif method == "tools/call" and msg["params"]["name"] == "quit":
        sys.exit(0)
    elif method == "tools/call":
        text = "%s|%s|%d" % (os.environ.get("WHO", "-"), os.environ.get("TEAMS", "-"), os.getpid())
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "ping":
        result = {}
    else:
        out = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}
        print(json.dumps(out), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
