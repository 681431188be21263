"""The panel's web application and server: the route table, a verb's refusal as a page, and the
server bound to 127.0.0.1 alone, on a port the system picks unless one is asked for."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memvault.scopes import Scopes
from memvault.vault.errors import MemvaultError
from memvault.web import actions, pages
from memvault.web.render import page
from memvault.web.security import Guard, Session

STATIC = Path(__file__).with_name("static")


def _refused(request: Request, exc: Exception) -> Response:
    """A verb's refusal (a bad key, a past day, no such note) is the page's message, in the panel's frame."""
    return page("error.html", 400, **pages.common(request, message=str(exc)))


def build_app(scopes: Scopes, session: Session) -> Guard:
    reads: list[tuple[str, Callable[[Request], Response]]] = [
        ("/", pages.home), ("/entries", pages.entries), ("/entry", pages.entry), ("/trash", pages.trash),
        ("/review", pages.review), ("/context", pages.context), ("/days", pages.days), ("/note", pages.note),
        ("/health", pages.health),
    ]  # fmt: skip
    writes = [("/edit", actions.edit), ("/forget", actions.forget), ("/correct", actions.correct),
              ("/restore", actions.restore), ("/approve", actions.approve), ("/reject", actions.reject)]  # fmt: skip
    routes: list[Route | Mount] = [Route(path, handler, methods=["GET"]) for path, handler in reads]
    routes += [Route(path, handler, methods=["POST"]) for path, handler in writes]
    routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, exception_handlers={MemvaultError: _refused})
    app.state.scopes = scopes
    app.state.session = session
    app.state.recent_prompts = []
    return Guard(app, session)


def bind(port: int = 0) -> socket.socket:
    """The listening socket, on the loopback address only: nothing off this machine can reach the panel."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


def serve(scopes: Scopes, port: int = 0, ready: Callable[[str], None] = print) -> None:
    """Serve the panel until interrupted; `ready` gets the URL to open (with the token) once it listens."""
    import uvicorn

    session = Session()
    sock = bind(port)
    session.port = sock.getsockname()[1]
    config = uvicorn.Config(build_app(scopes, session), log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    ready(session.url())
    server.run(sockets=[sock])
