"""The panel's guard: a local web server is an attack surface, since any page the person's browser
opens can send requests to 127.0.0.1. Every request must name the panel by a loopback Host (a
rebound DNS name is refused) and carry its token (in the printed URL once, then a cookie that is
HttpOnly and SameSite=Strict); every write must come from the panel's own origin and carry the form
token derived from the session's. Every answer forbids framing, sniffing, referrers and any script or
style not served by the panel itself."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    # the token is in the address bar once: no other site ever gets a Referer; "no-referrer" would make
    # the browser send `Origin: null` on the panel's own forms
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


@dataclass
class Session:
    """The one secret of a running panel and the port it is bound to (known once the socket is)."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    port: int = 0

    @property
    def cookie(self) -> str:
        return f"memvault_ui_{self.port}"  # one per port: two panels on one host keep their own

    @property
    def csrf(self) -> str:
        """The form token: derived from the session's, so it needs no storage and dies with the server."""
        return hmac.new(self.token.encode(), b"csrf", hashlib.sha256).hexdigest()[:32]

    def hosts(self) -> set[str]:
        return {f"{name}:{self.port}" for name in LOOPBACK_NAMES}

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/?{TOKEN_PARAM}={self.token}"

    def same(self, given: str | None, secret: str) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), secret.encode())


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookies(header: str) -> dict[str, str]:
    out = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        out[name] = value
    return out


class Guard:
    """ASGI middleware: Host, token and Origin checked before any route runs; security headers on every answer."""

    def __init__(self, app: ASGIApp, session: Session) -> None:
        self.app = app
        self.session = session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.check(scope)
        if refusal is not None:
            refusal.headers.update(HEADERS)
            await refusal(scope, receive, send)
            return

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + [
                    (k.encode(), v.encode()) for k, v in HEADERS.items()
                ]
            await send(message)

        await self.app(scope, receive, send_guarded)

    def check(self, scope: Scope) -> Response | None:
        """The answer to a request refused (or the redirect that trades the URL's token for the cookie); None: go on."""
        headers = _headers(scope)
        host = headers.get("host", "")
        if host not in self.session.hosts():
            return PlainTextResponse("refused: this panel answers only to its loopback address", 403)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        given = query.get(TOKEN_PARAM)
        if given is not None and scope["method"] == "GET":
            if not self.session.same(given, self.session.token):
                return PlainTextResponse("refused: wrong token", 403)
            rest = urlencode([(k, v) for k, v in query.items() if k != TOKEN_PARAM])
            response = RedirectResponse(scope["path"] + (f"?{rest}" if rest else ""), 303)
            response.set_cookie(self.session.cookie, self.session.token, httponly=True, samesite="strict",
                                path="/")  # fmt: skip
            return response
        if not self.session.same(_cookies(headers.get("cookie", "")).get(self.session.cookie), self.session.token):
            return PlainTextResponse("refused: no token; open the URL `memvault ui` printed", 403)
        if scope["method"] not in ("GET", "HEAD") and headers.get("origin") != f"http://{host}":
            return PlainTextResponse("refused: a write must come from the panel's own page", 403)
        return None
