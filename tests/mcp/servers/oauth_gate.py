"""A scripted OAuth 2.1 authorization server in front of an MCP test server's ASGI app, for the
`mcpServer/oauth/login` tests (`weft_test_server.py --oauth`).

One origin serves both roles, as many real MCP servers do:

    GET  /.well-known/oauth-protected-resource/mcp   RFC 9728 protected-resource metadata
    GET  /.well-known/oauth-authorization-server     RFC 8414 authorization-server metadata
    POST /register                                    RFC 7591 dynamic client registration
    GET  /authorize                                   answers 302 to redirect_uri?code&state at once
                                                      (the test plays the browser; no page)
    POST /token                                       authorization_code (PKCE S256 checked) and
                                                      refresh_token grants
    *    /mcp                                         the MCP app, only with a live access token;
                                                      else 401 with a WWW-Authenticate challenge

Access tokens live `expires_in` seconds (`--oauth-expires-in`), and the gate refuses them
afterwards, so only a client that refreshes keeps working. Events go to WEFT_TEST_EVENTS:
`oauth register`, `oauth token authorization_code`, `oauth token refresh_token`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any, Callable
from urllib.parse import parse_qs, urlencode


class OAuthGate:
    """ASGI wrapper: the authorization server's routes, and a bearer check on everything else."""

    def __init__(self, app: Any, expires_in: int, record: Callable[[str], None]) -> None:
        self.app = app
        self.expires_in = expires_in
        self.record = record
        self.clients: dict[str, list[str]] = {}
        self.codes: dict[str, dict[str, str]] = {}
        self.access: dict[str, float] = {}
        self.refresh: set[str] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        base = "http://" + headers.get(b"host", b"127.0.0.1").decode()
        path = scope["path"]
        method = scope["method"]
        if path.startswith("/.well-known/oauth-protected-resource"):
            await json_response(send, 200, {
                "resource": base + "/mcp",
                "authorization_servers": [base],
                "bearer_methods_supported": ["header"],
            })
        elif path == "/.well-known/oauth-authorization-server":
            await json_response(send, 200, {
                "issuer": base,
                "authorization_endpoint": base + "/authorize",
                "token_endpoint": base + "/token",
                "registration_endpoint": base + "/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            })
        elif path.startswith("/.well-known/"):
            await json_response(send, 404, {"error": "not_found"})
        elif path == "/register" and method == "POST":
            body = json.loads(await read_body(receive) or b"{}")
            client_id = "client-" + secrets.token_hex(4)
            self.clients[client_id] = list(body.get("redirect_uris", []))
            self.record("oauth register")
            await json_response(send, 201, {
                "client_id": client_id,
                "redirect_uris": self.clients[client_id],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            })
        elif path == "/authorize" and method == "GET":
            await self.authorize(scope, send)
        elif path == "/token" and method == "POST":
            await self.token(receive, send)
        elif self.authorized(headers):
            await self.app(scope, receive, send)
        else:
            challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            await json_response(send, 401, {"error": "invalid_token"}, [(b"www-authenticate", challenge.encode())])

    def authorized(self, headers: dict[bytes, bytes]) -> bool:
        scheme, _, token = headers.get(b"authorization", b"").decode().partition(" ")
        expiry = self.access.get(token)
        return scheme.lower() == "bearer" and expiry is not None and time.time() < expiry

    async def authorize(self, scope: Any, send: Any) -> None:
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        client_id = query.get("client_id", "")
        redirect_uri = query.get("redirect_uri", "")
        if redirect_uri not in self.clients.get(client_id, []):
            await json_response(send, 400, {"error": "invalid_request", "error_description": "unknown client or redirect_uri"})
            return
        if query.get("response_type") != "code" or query.get("code_challenge_method") != "S256" or "code_challenge" not in query:
            await json_response(send, 400, {"error": "invalid_request", "error_description": "PKCE S256 required"})
            return
        code = secrets.token_urlsafe(16)
        self.codes[code] = {"client_id": client_id, "redirect_uri": redirect_uri, "challenge": query["code_challenge"]}
        location = redirect_uri + "?" + urlencode({"code": code, "state": query.get("state", "")})
        await send({"type": "http.response.start", "status": 302, "headers": [(b"location", location.encode()), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    async def token(self, receive: Any, send: Any) -> None:
        form = {k: v[0] for k, v in parse_qs((await read_body(receive)).decode()).items()}
        grant = form.get("grant_type")
        if grant == "authorization_code":
            issued = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if issued is None or issued["challenge"] != digest or issued["redirect_uri"] != form.get("redirect_uri"):
                await json_response(send, 400, {"error": "invalid_grant"})
                return
        elif grant == "refresh_token":
            if form.get("refresh_token") not in self.refresh:
                await json_response(send, 400, {"error": "invalid_grant"})
                return
            self.refresh.discard(form["refresh_token"])
        else:
            await json_response(send, 400, {"error": "unsupported_grant_type"})
            return
        self.record(f"oauth token {grant}")
        access = "at-" + secrets.token_hex(8)
        refresh = "rt-" + secrets.token_hex(8)
        self.access[access] = time.time() + self.expires_in
        self.refresh.add(refresh)
        await json_response(send, 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": refresh,
        })


async def read_body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def json_response(send: Any, status: int, value: Any, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(value).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
