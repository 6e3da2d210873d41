"""Serving an MCP test server's ASGI app over streamable HTTP on 127.0.0.1, for both test
servers beside this file (`weft_test_server.py` and `weft_edge_server.py` import it).

The socket is bound here rather than in uvicorn, so that port 0 works and the real port can be
told: once the server accepts connections, one line goes to stderr,
`<name>: listening on http://127.0.0.1:<port>/mcp`.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio


def serve_app(app: Any, port: int, name: str) -> None:
    """Serve `app` (its routes under /mcp) on 127.0.0.1:`port` until the process is stopped."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    sock.set_inheritable(True)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(uv.serve, [sock])
            while not uv.started:
                await anyio.sleep(0.01)
            print(f"{name}: listening on http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)

    anyio.run(main)
