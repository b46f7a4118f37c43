"""A stdio MCP server (initialize-era) for the tests of backends started per caller:
`whoami` answers "WHO|TEAMS|pid" from its environment, `quit` exits, and `ask` asks its
client for a name (elicitation) and answers "hello <name>"."""

import json, os, sys


def send(message):
    print(json.dumps(message), flush=True)


def answer_of(request_id):
    """Reads lines until the response to `request_id`; its result."""
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        msg = json.loads(line)
        if msg.get("id") == request_id and "method" not in msg:
            return msg.get("result", {})


while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, rid = msg.get("method"), msg["id"]
    name = (msg.get("params") or {}).get("name")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "who", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("whoami", "quit", "ask")]}
    elif method == "tools/call" and name == "quit":
        sys.exit(0)
    elif method == "tools/call" and name == "ask":
        send({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
              "params": {"message": "Your name?", "requestedSchema": {"type": "object",
                         "properties": {"name": {"type": "string"}}}}})
        got = answer_of("ask-1").get("content", {}).get("name", "nobody")
        result = {"content": [{"type": "text", "text": "hello %s" % got}]}
    elif method == "tools/call":
        text = "%s|%s|%d" % (os.environ.get("WHO", "-"), os.environ.get("TEAMS", "-"), os.getpid())
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
        continue
    send({"jsonrpc": "2.0", "id": rid, "result": result})
