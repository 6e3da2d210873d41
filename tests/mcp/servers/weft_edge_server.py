"""A second MCP test server for Weft, on the official MCP Python SDK (mcp 1.x): the edge cases
of a server's questions and tool names (tests/mcp/README.md §3b).

    python weft_edge_server.py              # the question tools (FastMCP), stdio
    python weft_edge_server.py --http PORT  # the same over streamable HTTP, 127.0.0.1:PORT/mcp
    python weft_edge_server.py --names      # a low-level server listing tool names APIs refuse

With --http, PORT 0 picks a free port, and once the server accepts connections it writes one
line to stderr: `weft_edge_server: listening on http://127.0.0.1:<port>/mcp`.

Question tools:
    ask_after(question, seconds=0, echo_token=false, after_file="")
        waits until the file `after_file` exists (when given; at most 60 s), sleeps `seconds`,
        then asks `question` (elicitation/create, form mode, sent as related to the call);
        with `echo_token`, the request's `_meta.progressToken` is the call's own progress
        token. Returns the answer, "declined" or "cancelled"; an error answer makes the call
        fail with the error's message.
    wait(seconds, until_file="")
        sleeps `seconds`, or with `until_file` waits until that file exists (at most 60 s);
        returns "waited".
    flood(count, seconds)
        asks `count` questions at once without waiting for their answers, then returns
        "asked <count>" after `seconds`; the questions stay the server's until answered.

--names lists, in this order: `../../etc/passwd`, `has space`, `naïve`, `echo`, `echo` again
(a second tool of the same name), `x` * 70, `ok-name`. Calling any of them returns
`called <name>` (the name the call named).

Environment:
    WEFT_TEST_EVENTS  a file; the server appends `start <pid>` when it starts, `asked <question>`
                      when it sends a question, `answer <question> <action>` (or
                      `answer <question> error <message>`) when the answer comes, and
                      `flood <i> <action>` for each answer to a `flood` question

It only ever listens on 127.0.0.1 and makes no connection of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

import anyio

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError
from mcp.shared.message import ServerMessageMetadata

from http_listen import serve_app

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "description": "Your answer"}},
    "required": ["answer"],
}

NAMES = ["../../etc/passwd", "has space", "naïve", "echo", "echo", "x" * 70, "ok-name"]


def record_event(line: str) -> None:
    """Append one line to the WEFT_TEST_EVENTS file, if the test named one."""
    path = os.environ.get("WEFT_TEST_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(line + "\n")


server = FastMCP("weft-edge-server", log_level="WARNING")

# The `flood` questions outlive their call: keep their tasks referenced.
_background: set[asyncio.Task[None]] = set()


async def _until(path: str) -> None:
    """Wait until the file exists (the test's signal), at most 60 s."""
    with anyio.move_on_after(60):
        while not os.path.exists(path):
            await anyio.sleep(0.02)


async def _ask(ctx: Context, question: str, meta: dict[str, Any] | None) -> types.ElicitResult:
    params = types.ElicitRequestFormParams(message=question, requestedSchema=SCHEMA)
    if meta is not None:
        params = types.ElicitRequestFormParams.model_validate(
            {"message": question, "requestedSchema": SCHEMA, "_meta": meta}
        )
    return await ctx.request_context.session.send_request(
        types.ServerRequest(types.ElicitRequest(params=params)),
        types.ElicitResult,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )


@server.tool()
async def ask_after(
    question: str, ctx: Context, seconds: float = 0.0, echo_token: bool = False, after_file: str = ""
) -> str:
    """Waits for `after_file` and `seconds`, then asks `question`; returns the answer, "declined" or "cancelled"."""
    meta = None
    if echo_token:
        own = ctx.request_context.meta
        token = own.progressToken if own is not None else None
        meta = {"progressToken": token}
    if after_file:
        await _until(after_file)
    await anyio.sleep(seconds)
    record_event(f"asked {question}")
    try:
        result = await _ask(ctx, question, meta)
    except McpError as err:
        record_event(f"answer {question} error {err.error.message}")
        raise
    record_event(f"answer {question} {result.action}")
    if result.action == "accept":
        return str((result.content or {}).get("answer", ""))
    return "declined" if result.action == "decline" else "cancelled"


@server.tool()
async def wait(seconds: float, until_file: str = "") -> str:
    """Sleeps `seconds`, or waits until `until_file` exists; returns "waited"."""
    if until_file:
        await _until(until_file)
    else:
        await anyio.sleep(seconds)
    return "waited"


@server.tool()
async def flood(count: int, seconds: float, ctx: Context) -> str:
    """Asks `count` questions at once, returns after `seconds` without waiting for answers."""

    async def one(i: int) -> None:
        try:
            result = await _ask(ctx, f"question {i}", None)
            record_event(f"flood {i} {result.action}")
        except McpError as err:
            record_event(f"flood {i} error {err.error.message}")

    for i in range(count):
        task = asyncio.get_running_loop().create_task(one(i))
        _background.add(task)
        task.add_done_callback(_background.discard)
    await anyio.sleep(seconds)
    return f"asked {count}"


def serve_names() -> None:
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    app: Server[Any, Any] = Server("weft-names-server")

    @app.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(
                name=name,
                description=f"Tool number {i} (`{name}`).",
                inputSchema={"type": "object", "properties": {}},
                annotations=types.ToolAnnotations(readOnlyHint=True),
            )
            for i, name in enumerate(NAMES)
        ]

    @app.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        return [types.TextContent(type="text", text=f"called {name}")]

    async def run() -> None:
        async with stdio_server() as (read, write):
            await app.run(read, write, app.create_initialization_options())

    anyio.run(run)


def serve_http(port: int) -> None:
    serve_app(server.streamable_http_app(), port, "weft_edge_server")


def main() -> None:
    parser = argparse.ArgumentParser(description="Weft's edge-case MCP test server.")
    parser.add_argument("--names", action="store_true", help="list tool names model APIs refuse")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    record_event(f"start {os.getpid()}")
    if args.names:
        serve_names()
    elif args.http is not None:
        serve_http(args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
