"""MCP over streamable HTTP (`memvault mcp --http`): a team's agents reach one memory, a vault whose
index may live on a Qdrant server, without a local install each. Every request carries the bearer
token the operator set in `$MEMVAULT_MCP_TOKEN` (there is no default: without one the server does not
start); it listens on 127.0.0.1 unless told another address, where the SDK's DNS-rebinding check
also holds the Host and Origin to loopback names."""

from __future__ import annotations

import hmac
import socket
from collections.abc import Callable
from typing import Any

from memvault.vault.errors import UsageError
from memvault.vault.places import env

TOKEN_ENV = "MEMVAULT_MCP_TOKEN"
PATH = "/mcp"
MIN_TOKEN = 16  # characters: a guessable token is no lock


def token() -> str:
    given = env(TOKEN_ENV)
    if not given:
        raise UsageError(f"MCP over HTTP needs a bearer token: set ${TOKEN_ENV} (e.g. to `openssl rand -hex 32`)")
    if len(given) < MIN_TOKEN:
        raise UsageError(f"${TOKEN_ENV} is {len(given)} characters; use at least {MIN_TOKEN} (openssl rand -hex 32)")
    return given


def bearer(app: Any, secret: str) -> Callable[..., Any]:
    """`app` behind `Authorization: Bearer SECRET`: any other HTTP request is answered 401 before it
    reaches the MCP session manager (the lifespan passes through)."""
    expected = f"Bearer {secret}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", [])).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b"refused: a bearer token is needed (Authorization: Bearer $MEMVAULT_MCP_TOKEN)\n"
                headers = [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def serve_http(server: Any, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve `server` (an SDK `MCPServer`) at `http://HOST:PORT/mcp` until stopped; `ready` gets the URL
    once the socket listens (port 0: one the system picks)."""
    import uvicorn

    secret = token()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        raise UsageError(f"{host}:{port}: cannot listen there ({exc.strerror or exc})") from None
    sock.listen(64)
    bound = sock.getsockname()[1]
    app = bearer(server.streamable_http_app(streamable_http_path=PATH, host=host), secret)
    config = uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False, server_header=False)
    shown = f"[{host}]" if ":" in host else host
    ready(f"http://{shown}:{bound}{PATH}")
    uvicorn.Server(config).run(sockets=[sock])
