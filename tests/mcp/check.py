"""A developer's self-check of the MCP test servers that tests/mcp/install.sh installs.

    tests/mcp/install.sh
    target/mcp-servers/venv/bin/python tests/mcp/check.py

Drives both servers with the MCP Python SDK's own client (mcp.client.stdio and
mcp.client.streamable_http) and checks what tests/mcp/README.md promises: weft_test_server.py
over stdio (tools, results, resources, progress, list_changed, elicitation, environment,
cancellation, a closed connection, crash) and over streamable HTTP (with and without a bearer token), and
server-everything over stdio and streamable HTTP. Cancellation and the crash are driven with
hand-written JSON-RPC (tests/mcp/inventory.py's Wire), where the request id is ours to name.
Everything listens on and talks to 127.0.0.1 only. Not part of CI's test command.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from inventory import Wire  # noqa: E402

PATHS = dict(
    line.split("=", 1)
    for line in subprocess.run(
        [str(HERE / "install.sh"), "--paths"], check=True, capture_output=True, text=True
    ).stdout.splitlines()
)
PYTHON = sys.executable
TEST_SERVER = PATHS["WEFT_MCP_TEST_SERVER"]
NODE = PATHS["WEFT_MCP_NODE"]
EVERYTHING_JS = PATHS["WEFT_MCP_EVERYTHING_JS"]

passed = 0
failed = 0


def check(what: str, ok: bool, detail: object = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {what}")
    else:
        failed += 1
        print(f"FAIL  {what}: {detail}")


def dump(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True), ensure_ascii=False)


class Notifications:
    """message_handler for ClientSession: keeps every server notification."""

    def __init__(self) -> None:
        self.seen: list[types.ServerNotification] = []
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            self.seen.append(message)
            self.event.set()

    def methods(self) -> list[str]:
        return [n.root.method for n in self.seen]

    async def wait_for(self, method: str, seconds: float = 5) -> None:
        """Wait (at most `seconds`) until a notification `method` has been seen."""
        with anyio.move_on_after(seconds):
            while method not in self.methods():
                await self.event.wait()
                self.event = anyio.Event()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def accept_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"answer": "blue"})


async def decline_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


# --- weft_test_server.py over stdio ---------------------------------------------------------


async def weft_stdio(scratch: Path) -> None:
    events = scratch / "events"
    notes = scratch / "notes"
    home = scratch / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "WEFT_TEST_EVENTS": str(events),
        "WEFT_TEST_NOTES": str(notes),
        "WEFT_TEST_MARK": "mark-42",
    }
    params = StdioServerParameters(command=PYTHON, args=[TEST_SERVER], env=env)
    notifications = Notifications()
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, message_handler=notifications, elicitation_callback=accept_elicitation
    ) as session:
        init = await session.initialize()
        check("weft stdio: initialize has the instructions", bool(init.instructions), init.instructions)
        check(
            "weft stdio: tools.listChanged is announced",
            init.capabilities.tools is not None and init.capabilities.tools.listChanged is True,
            init.capabilities.tools,
        )
        tools = {t.name: t for t in (await session.list_tools()).tools}
        expected = {"echo", "add", "fail", "write_note", "slow", "crash", "add_tool", "whoami", "pid", "ask_user"}
        check("weft stdio: tools/list names", set(tools) == expected, sorted(tools))
        annotations = {
            name: (t.annotations.model_dump(exclude_none=True) if t.annotations else None) for name, t in tools.items()
        }
        want_annotations = {
            "echo": {"readOnlyHint": True},
            "add": None,
            "fail": {"readOnlyHint": True},
            "write_note": {"readOnlyHint": False, "destructiveHint": True},
            "slow": {"readOnlyHint": True},
            "crash": None,
            "add_tool": None,
            "whoami": {"readOnlyHint": True},
            "pid": {"readOnlyHint": True},
            "ask_user": None,
        }
        check("weft stdio: annotations", annotations == want_annotations, annotations)

        echo = await session.call_tool("echo", {"text": "hi"})
        print("      echo ->", dump(echo))
        check(
            "weft stdio: echo",
            echo.content[0].text == "echo: hi" and echo.structuredContent == {"result": "echo: hi"} and not echo.isError,
            dump(echo),
        )
        add = await session.call_tool("add", {"a": 2, "b": 3})
        print("      add ->", dump(add))
        check("weft stdio: add", add.content[0].text == "5" and add.structuredContent == {"result": 5}, dump(add))
        fail = await session.call_tool("fail", {"reason": "boom"})
        print("      fail ->", dump(fail))
        check(
            "weft stdio: fail is a tool error carrying the reason",
            fail.isError and "boom" in fail.content[0].text,
            dump(fail),
        )

        greeting = await session.read_resource("weft://greeting")
        content = greeting.contents[0]
        check(
            "weft stdio: resource weft://greeting",
            getattr(content, "text", None) == "hello from the weft test server" and content.mimeType == "text/plain",
            dump(greeting),
        )
        templates = (await session.list_resource_templates()).resourceTemplates
        check(
            "weft stdio: resource template weft://items/{item_id}",
            [t.uriTemplate for t in templates] == ["weft://items/{item_id}"],
            templates,
        )
        item = await session.read_resource("weft://items/42")
        check("weft stdio: read weft://items/42", item.contents[0].text == "item 42", dump(item))

        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        slow = await session.call_tool("slow", {"seconds": 0.4, "steps": 4}, progress_callback=on_progress)
        check("weft stdio: slow returns slept", slow.content[0].text == "slept", dump(slow))
        check(
            "weft stdio: slow sent 4 progress notifications",
            [p[0] for p in progress] == [1, 2, 3, 4] and all(p[1] == 4 for p in progress),
            progress,
        )

        notifications.seen.clear()
        added = await session.call_tool("add_tool", {"name": "extra"})
        await notifications.wait_for("notifications/tools/list_changed")
        check(
            "weft stdio: add_tool sends notifications/tools/list_changed",
            added.content[0].text == "added" and "notifications/tools/list_changed" in notifications.methods(),
            notifications.methods(),
        )
        names = [t.name for t in (await session.list_tools()).tools]
        extra = await session.call_tool("extra", {})
        check(
            "weft stdio: the added tool is listed and callable",
            "extra" in names and extra.content[0].text == "extra called",
            (names, dump(extra)),
        )

        note = await session.call_tool("write_note", {"text": "first note"})
        check(
            "weft stdio: write_note appends to WEFT_TEST_NOTES",
            note.content[0].text == "noted" and notes.read_text() == "first note\n",
            (dump(note), notes.read_text() if notes.exists() else None),
        )
        who = await session.call_tool("whoami", {})
        check(
            "weft stdio: whoami reports WEFT_TEST_MARK and HOME",
            who.content[0].text == f"WEFT_TEST_MARK=mark-42\nHOME={home}",
            who.content[0].text,
        )
        pid = await session.call_tool("pid", {})
        check(
            "weft stdio: pid matches the start line in WEFT_TEST_EVENTS",
            f"start {pid.structuredContent['result']}" in events.read_text().splitlines(),
            (dump(pid), events.read_text()),
        )
        asked = await session.call_tool("ask_user", {"question": "Favourite colour?"})
        check("weft stdio: ask_user returns the elicited answer", asked.content[0].text == "blue", dump(asked))

    # A client that declines elicitation.
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, elicitation_callback=decline_elicitation
    ) as session:
        await session.initialize()
        asked = await session.call_tool("ask_user", {"question": "Favourite colour?"})
        check("weft stdio: ask_user returns declined", asked.content[0].text == "declined", dump(asked))

    # Cancellation: a raw client names the request id and sends notifications/cancelled.
    wire = Wire([PYTHON, TEST_SERVER], env=env)
    wire.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "check", "version": "0"}})
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send(
        {"jsonrpc": "2.0", "id": 77, "method": "tools/call",
         "params": {"name": "slow", "arguments": {"seconds": 10, "steps": 20}, "_meta": {"progressToken": "p"}}}
    )
    before = wire.drain(1.0)
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77, "reason": "check.py"}})
    after = wire.drain(1.5)
    responses = [m for m in after if m.get("id") == 77]
    lines = events.read_text().splitlines()
    check(
        "weft stdio: cancelling slow is noticed (`cancelled slow` in WEFT_TEST_EVENTS)",
        "cancelled slow" in lines and any(m.get("method") == "notifications/progress" for m in before),
        lines,
    )
    print("      response to the cancelled request:", json.dumps(responses))
    wire.proc.terminate()
    wire.proc.wait(timeout=10)

    # Closing the connection under a running slow is not a cancellation by the client.
    wire = Wire([PYTHON, TEST_SERVER], env=env)
    wire.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "check", "version": "0"}})
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 10}}})
    await anyio.sleep(0.7)
    assert wire.proc.stdin is not None
    wire.proc.stdin.close()
    status = wire.proc.wait(timeout=10)
    lines = events.read_text().splitlines()
    check(
        "weft stdio: stdin closed under slow -> exit 0 and `interrupted slow` (not `cancelled slow`)",
        status == 0 and lines[-1] == "interrupted slow" and lines.count("cancelled slow") == 1,
        (status, lines),
    )

    # Crash: the process ends with status 3 and never answers.
    wire = Wire([PYTHON, TEST_SERVER], env=env)
    wire.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "check", "version": "0"}})
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "crash", "arguments": {}}})
    status = wire.proc.wait(timeout=10)
    got = wire.drain(0.2)
    check("weft stdio: crash exits with status 3 and no response", status == 3 and not got, (status, got))

    starts = [line for line in events.read_text().splitlines() if line.startswith("start ")]
    check("weft stdio: one `start <pid>` line per process (5 started)", len(starts) == 5, starts)


# --- weft_test_server.py over streamable HTTP -----------------------------------------------


async def start_http(extra: list[str], stack: AsyncExitStack) -> str:
    proc = subprocess.Popen(
        [PYTHON, TEST_SERVER, "--http", "0", *extra], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    stack.callback(lambda: (proc.terminate(), proc.wait(timeout=10)))
    assert proc.stderr is not None
    line = await anyio.to_thread.run_sync(proc.stderr.readline)
    prefix = "weft_test_server: listening on "
    if not line.startswith(prefix):
        raise RuntimeError(f"unexpected first stderr line: {line!r}")
    return line[len(prefix):].strip()


async def weft_http() -> None:
    async with AsyncExitStack() as stack:
        url = await start_http(["--bearer", "s3cret"], stack)
        print(f"      serving at {url} (bearer s3cret)")
        init = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "check", "version": "0"}},
        }
        accept = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(trust_env=False) as http:
            bare = await http.post(url, json=init, headers=accept)
            wrong = await http.post(url, json=init, headers={**accept, "Authorization": "Bearer nope"})
        check(
            "weft http: no token -> 401 with WWW-Authenticate: Bearer",
            bare.status_code == 401 and bare.headers.get("www-authenticate", "").startswith("Bearer"),
            (bare.status_code, dict(bare.headers)),
        )
        check("weft http: wrong token -> 401", wrong.status_code == 401, wrong.status_code)

        client = httpx.AsyncClient(
            headers={"Authorization": "Bearer s3cret"}, trust_env=False, timeout=httpx.Timeout(30, read=300)
        )
        await stack.enter_async_context(client)
        notifications = Notifications()
        read, write, _ = await stack.enter_async_context(streamable_http_client(url, http_client=client))
        session = await stack.enter_async_context(ClientSession(read, write, message_handler=notifications))
        await session.initialize()
        echo = await session.call_tool("echo", {"text": "over http"})
        check("weft http: echo with the token", echo.content[0].text == "echo: over http", dump(echo))
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        slow = await session.call_tool("slow", {"seconds": 0.3, "steps": 3}, progress_callback=on_progress)
        check("weft http: slow with progress", slow.content[0].text == "slept" and progress == [1, 2, 3], progress)
        await session.call_tool("add_tool", {"name": "via_http"})
        await notifications.wait_for("notifications/tools/list_changed")
        check(
            "weft http: list_changed arrives on the call's stream",
            "notifications/tools/list_changed" in notifications.methods(),
            notifications.methods(),
        )

    async with AsyncExitStack() as stack:
        url = await start_http([], stack)
        client = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(30, read=300))
        await stack.enter_async_context(client)
        read, write, _ = await stack.enter_async_context(streamable_http_client(url, http_client=client))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        echo = await session.call_tool("echo", {"text": "open"})
        check("weft http: without --bearer no token is needed", echo.content[0].text == "echo: open", dump(echo))


# --- server-everything ----------------------------------------------------------------------


async def everything_session(session: ClientSession, transport: str) -> None:
    init = await session.initialize()
    check(
        f"everything {transport}: serverInfo",
        init.serverInfo.name == "mcp-servers/everything",
        init.serverInfo,
    )
    names = [t.name for t in (await session.list_tools()).tools]
    print(f"      {len(names)} tools: {', '.join(names)}")
    check(
        f"everything {transport}: has echo, get-sum, trigger-long-running-operation, trigger-elicitation-request",
        {"echo", "get-sum", "trigger-long-running-operation", "trigger-elicitation-request"} <= set(names),
        names,
    )
    echo = await session.call_tool("echo", {"message": "hi"})
    check(f"everything {transport}: echo", echo.content[0].text == "Echo: hi", dump(echo))
    total = await session.call_tool("get-sum", {"a": 2, "b": 3})
    check(f"everything {transport}: get-sum", total.content[0].text == "The sum of 2 and 3 is 5.", dump(total))
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    long = await session.call_tool(
        "trigger-long-running-operation", {"duration": 0.6, "steps": 3}, progress_callback=on_progress
    )
    check(
        f"everything {transport}: trigger-long-running-operation sends progress",
        progress == [1, 2, 3] and "completed" in long.content[0].text,
        (progress, dump(long)),
    )
    text = await session.read_resource("demo://resource/dynamic/text/1")
    check(
        f"everything {transport}: read demo://resource/dynamic/text/1",
        text.contents[0].text.startswith("Resource 1: This is a plaintext resource"),
        dump(text),
    )
    elicited = await session.call_tool("trigger-elicitation-request", {})
    check(
        f"everything {transport}: trigger-elicitation-request reaches the elicitation callback",
        "declined" in elicited.content[0].text,
        dump(elicited),
    )


async def everything_stdio() -> None:
    params = StdioServerParameters(command=NODE, args=[EVERYTHING_JS, "stdio"])
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, elicitation_callback=decline_elicitation
    ) as session:
        await everything_session(session, "stdio")


async def everything_http() -> None:
    port = free_port()
    # It listens on every interface (it takes no host setting); this check only connects to
    # 127.0.0.1.
    proc = subprocess.Popen(
        [NODE, EVERYTHING_JS, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await anyio.sleep(0.1)
        async with httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(30, read=300)) as client, \
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (read, write, _), \
                ClientSession(read, write, elicitation_callback=decline_elicitation) as session:
            await everything_session(session, "http")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="weft-mcp-check-") as scratch:
        with anyio.fail_after(120):
            await weft_stdio(Path(scratch))
            await weft_http()
            await everything_stdio()
            await everything_http()


if __name__ == "__main__":
    anyio.run(main)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
