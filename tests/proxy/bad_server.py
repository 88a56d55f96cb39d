#!/usr/bin/env python3
"""A misbehaving MCP server over stdio, for the proxy check: `garbage` answers a line that is
not JSON, `deep` a result nested 300 levels (past every JSON reader's depth limit), `crash`
exits mid-call, `ok` answers. Written by hand, without an SDK, so it can misbehave."""
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOLS = [
    {"name": name, "description": f"the {name} tool", "inputSchema": {"type": "object", "properties": {}}}
    for name in ("garbage", "deep", "crash", "ok")
]

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message:
        continue
    method, ident = message.get("method"), message["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bad", "version": "1.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "garbage":
            sys.stdout.write("this is not JSON at all\n")
            sys.stdout.flush()
        elif name == "deep":
            nested = "bottom"
            for _ in range(300):
                nested = {"a": nested}
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "content": [{"type": "text", "text": "deep"}], "structuredContent": nested}})
        elif name == "crash":
            sys.exit(1)
        else:
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "content": [{"type": "text", "text": "fine"}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}})
