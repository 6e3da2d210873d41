"""Prints what an MCP server says on the wire, as raw JSON-RPC, for tests/mcp/README.md.

    python tests/mcp/inventory.py [--caps none|all] [--call NAME JSON]... [--read URI]... -- COMMAND ARGS...

Starts COMMAND as a stdio MCP server, speaks newline-delimited JSON-RPC to it by hand (no SDK,
so nothing is parsed or reordered on the way), and prints each message it receives: the
initialize result, tools/list, resources/list, resources/templates/list, prompts/list, then
one tools/call per --call (each with a progress token) and one resources/read per --read, with
the notifications that came with them.

--caps all announces every client capability (roots, sampling, form and URL elicitation,
tasks), which makes server-everything register its conditional tools; --caps none announces
none. Requests from the server are answered: roots/list with no roots, elicitation/create with
"decline", anything else with an error. A developer's tool; no test runs it.
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import threading
import time

ALL_CAPS = {
    "roots": {"listChanged": True},
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}},
}


class Wire:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.inbox: queue.Queue[dict] = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if line:
                self.inbox.put(json.loads(line))

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None, timeout: float = 30) -> tuple[dict, list[dict]]:
        """Sends a request; returns its response and every other message that came meanwhile."""
        rid = self.next_id
        self.next_id += 1
        message: dict = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        others: list[dict] = []
        deadline = time.monotonic() + timeout
        while True:
            got = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
            if got.get("id") == rid and "method" not in got:
                return got, others
            others.append(got)
            if "method" in got and "id" in got:
                self.answer(got)

    def answer(self, request: dict) -> None:
        method = request["method"]
        if method == "roots/list":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}})
        elif method == "elicitation/create":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}})
        else:
            error = {"code": -32601, "message": f"inventory.py does not answer {method}"}
            self.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def drain(self, seconds: float) -> list[dict]:
        got: list[dict] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            got.append(message)
            if "method" in message and "id" in message:
                self.answer(message)
        return got


def show(title: str, message: object) -> None:
    print(f"### {title}")
    print(json.dumps(message, indent=2, ensure_ascii=False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--caps", choices=["none", "all"], default="none")
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument("--read", action="append", default=[], metavar="URI")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no server command")

    wire = Wire(command)
    caps = ALL_CAPS if args.caps == "all" else {}
    init, early = wire.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "weft-inventory", "version": "0"}},
    )
    show("initialize", init)
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    # server-everything registers some tools, and asks for roots, just after initialized.
    early += wire.drain(1.0)
    if early:
        show("messages after initialize", early)
    for method in ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]:
        response, others = wire.request(method, {})
        show(method, response)
        if others:
            show(f"messages during {method}", others)
    for token, (name, arguments) in enumerate(args.call, start=1):
        params = {"name": name, "arguments": json.loads(arguments), "_meta": {"progressToken": token}}
        response, others = wire.request("tools/call", params, timeout=60)
        show(f"tools/call {name} {arguments}", response)
        if others:
            show(f"messages during tools/call {name}", others)
    for uri in args.read:
        response, others = wire.request("resources/read", {"uri": uri})
        show(f"resources/read {uri}", response)
        if others:
            show(f"messages during resources/read {uri}", others)
    wire.proc.terminate()
    wire.proc.wait(timeout=10)


if __name__ == "__main__":
    main()
