"""Weft's own MCP test server, built on the official MCP Python SDK's FastMCP (mcp 1.x).

Weft's MCP client tests start it to get a server whose every reply they know in advance; the
behaviour of each tool is a contract with those tests, described in tests/mcp/README.md.

    python weft_test_server.py                               # stdio
    python weft_test_server.py --http PORT [--bearer TOKEN]  # streamable HTTP, 127.0.0.1:PORT/mcp

With --http, PORT 0 picks a free port, and once the server accepts connections it writes one
line to stderr: `weft_test_server: listening on http://127.0.0.1:<port>/mcp`.
With --bearer, every HTTP request without `Authorization: Bearer TOKEN` is answered 401.
With --oauth, an OAuth authorization server on the same origin issues the tokens /mcp needs
(`oauth_gate.py`); --oauth-expires-in SECS sets their life (default 3600).

Environment:
    WEFT_TEST_EVENTS  a file; the server appends `start <pid>` when the process starts,
                      `cancelled slow` when the client cancels a `slow` call
                      (notifications/cancelled), and `interrupted slow` when a `slow` call is
                      cut short otherwise (the connection closed under it)
    WEFT_TEST_NOTES   a file; `write_note` appends its text to it, one line per call
    WEFT_TEST_MARK    echoed back by `whoami`, with HOME

It only ever listens on 127.0.0.1 and makes no outgoing connection.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from pydantic import BaseModel, Field

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.lowlevel import NotificationOptions
from mcp.types import ToolAnnotations

from http_listen import serve_app

INSTRUCTIONS = (
    "Weft's MCP test server: small deterministic tools (echo, add, fail, slow, crash, ...) "
    "for testing an MCP client."
)

READ_ONLY = ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True)


def record_event(line: str) -> None:
    """Append one line to the WEFT_TEST_EVENTS file, if the test named one."""
    path = os.environ.get("WEFT_TEST_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(line + "\n")


server = FastMCP("weft-test-server", instructions=INSTRUCTIONS, log_level="WARNING")

# FastMCP announces `tools.listChanged: false` unless told otherwise, although `add_tool` below
# does change the list. Its low-level server builds the capabilities each time a session
# starts (stdio and streamable HTTP alike), so wrapping that one method is enough.
_low_level = server._mcp_server
_default_init_options = _low_level.create_initialization_options


def _init_options(notification_options: Any = None, experimental_capabilities: Any = None) -> Any:
    return _default_init_options(
        notification_options or NotificationOptions(tools_changed=True),
        experimental_capabilities,
    )


_low_level.create_initialization_options = _init_options  # type: ignore[method-assign]


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Returns the text prefixed with "echo: "."""
    return "echo: " + text


@server.tool()
def add(a: int, b: int) -> int:
    """Returns a + b."""
    return a + b


# fail and crash have no return annotation, so FastMCP gives them no outputSchema.
@server.tool(annotations=READ_ONLY)
def fail(reason: str):  # noqa: ANN201
    """Always fails, with the given reason as the error."""
    raise RuntimeError(reason)


@server.tool(annotations=DESTRUCTIVE)
def write_note(text: str) -> str:
    """Appends the text as a line to the file named by WEFT_TEST_NOTES; returns "noted"."""
    path = os.environ.get("WEFT_TEST_NOTES")
    if path:
        with open(path, "a", encoding="utf-8") as notes:
            notes.write(text + "\n")
    return "noted"


@server.tool(annotations=READ_ONLY)
async def slow(seconds: float, ctx: Context, steps: int = 5) -> str:
    """Sleeps for `seconds` in `steps` equal steps, reporting progress after each; returns "slept"."""
    steps = max(steps, 1)
    # The SDK keeps one responder per request in flight; notifications/cancelled from the
    # client cancels that responder's scope. The handler is also cancelled, through another
    # scope, when the transport closes or the server stops: only the first counts as the
    # client's cancellation. (`_in_flight` is the SDK's private table, hence the fallback.)
    session = ctx.request_context.session
    responder = getattr(session, "_in_flight", {}).get(ctx.request_context.request_id)
    try:
        for step in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            # Sent only when the request carried a progressToken.
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
    except anyio.get_cancelled_exc_class():
        line = "cancelled slow" if responder is None or responder.cancelled else "interrupted slow"
        print(line, file=sys.stderr, flush=True)
        record_event(line)
        raise
    return "slept"


@server.tool()
def crash():  # noqa: ANN201
    """Ends the server process at once (exit status 3), without answering."""
    os._exit(3)


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Registers a new tool called `name` and tells the client the tool list changed."""

    def added() -> str:
        return f"{name} called"

    server.add_tool(added, name=name, description=f"Added at run time by add_tool({name!r}).")
    # Sent as part of this request, so that over streamable HTTP it travels on the call's own
    # response stream and reaches a client that has no standalone GET stream open.
    await ctx.session.send_notification(
        types.ServerNotification(types.ToolListChangedNotification()),
        related_request_id=ctx.request_id,
    )
    return "added"


@server.tool(annotations=READ_ONLY)
def whoami() -> str:
    """Returns WEFT_TEST_MARK and HOME as two `NAME=value` lines (`(unset)` when missing)."""
    return "\n".join(f"{var}={os.environ.get(var, '(unset)')}" for var in ("WEFT_TEST_MARK", "HOME"))


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """Returns the server's process id."""
    return os.getpid()


class Answer(BaseModel):
    answer: str = Field(description="Your answer")


@server.tool()
async def ask_user(question: str, ctx: Context) -> str:
    """Asks the user `question` through MCP elicitation; returns the answer, "declined" or "cancelled"."""
    result = await ctx.elicit(message=question, schema=Answer)
    if result.action == "accept":
        return result.data.answer
    return "declined" if result.action == "decline" else "cancelled"


@server.resource("weft://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the weft test server"


@server.resource("weft://items/{item_id}", name="item", mime_type="text/plain")
def item(item_id: str) -> str:
    """One item, made up from its id."""
    return f"item {item_id}"


class BearerGate:
    """ASGI wrapper: HTTP requests must carry `Authorization: Bearer <token>`, else 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = ("bearer " + token).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            # The scheme is case-insensitive, the token is not.
            scheme, _, token = given.partition(b" ")
            if (scheme.lower() + b" " + token) != self.expected:
                body = b'{"error":"unauthorized"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b'Bearer realm="weft-test-server"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_http(port: int, bearer: str | None, oauth_expires_in: int | None = None) -> None:
    app: Any = server.streamable_http_app()  # serves /mcp
    if bearer is not None:
        app = BearerGate(app, bearer)
    if oauth_expires_in is not None:
        from oauth_gate import OAuthGate

        app = OAuthGate(app, oauth_expires_in, record_event)
    serve_app(app, port, "weft_test_server")


def main() -> None:
    parser = argparse.ArgumentParser(description="Weft's MCP test server (stdio unless --http).")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--bearer", metavar="TOKEN", help="with --http: require Authorization: Bearer TOKEN")
    parser.add_argument("--oauth", action="store_true", help="with --http: require OAuth tokens it issues itself")
    parser.add_argument("--oauth-expires-in", type=int, default=3600, metavar="SECS", help="with --oauth: access token life")
    args = parser.parse_args()
    if args.bearer is not None and args.http is None:
        parser.error("--bearer needs --http")
    if args.oauth and args.http is None:
        parser.error("--oauth needs --http")

    record_event(f"start {os.getpid()}")
    if args.http is None:
        server.run("stdio")
    else:
        serve_http(args.http, args.bearer, args.oauth_expires_in if args.oauth else None)


if __name__ == "__main__":
    main()
