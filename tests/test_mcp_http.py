"""MCP over streamable HTTP (`memvault mcp --http`, issue 47): the same session as over stdio, through
the SDK's own HTTP client, with the bearer token; refused without it, and not started without one."""

from __future__ import annotations

import os
import select
import subprocess
import urllib.error
import urllib.request

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from tests.conftest import MEMVAULT
from tests.reliability.conftest import HASH_ENV
from tests.test_mcp import _tools

TOKEN = "a-test-token-of-32-characters-xx"


def _env(layout, user_root, **more: str) -> dict[str, str]:
    return {**os.environ, **HASH_ENV, "MEMVAULT_VAULT": str(layout.root), "MEMVAULT_USER_VAULT": str(user_root),
            **more}  # fmt: skip


def test_an_http_session_with_the_token_and_none_without(layout, user_root, cli):
    assert cli("init", "--lang", "en").returncode == 0
    server = subprocess.Popen([MEMVAULT, "mcp", "--http", "--port", "0"], env=_env(layout, user_root,
                              MEMVAULT_MCP_TOKEN=TOKEN), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)  # fmt: skip
    try:
        ready, _, _ = select.select([server.stdout], [], [], 120)
        assert ready, "memvault mcp --http printed no URL"
        line = server.stdout.readline()  # type: ignore[union-attr]
        url = line.split(": ", 1)[1].split(" ", 1)[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), line
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token-xx"}):
            request = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json", **headers})
            try:
                urllib.request.urlopen(request, timeout=30)
                raise AssertionError("answered without the token")
            except urllib.error.HTTPError as refused:
                assert refused.code == 401 and b"bearer token" in refused.read()

        async def run() -> None:
            with anyio.fail_after(300):
                client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
                async with client, streamable_http_client(url, http_client=client) as (read, write), \
                        ClientSession(read, write) as session:  # fmt: skip
                    await _tools(session)

        anyio.run(run)
    finally:
        server.terminate()
        assert server.wait(30) is not None
    assert cli("daemon", "status").stdout.split()[:2] == ["running", "no"], "the session's daemon outlived it"


def test_no_token_no_server(layout, user_root, cli):
    assert cli("init", "--lang", "en").returncode == 0
    for token in ("", "short"):
        done = subprocess.run([MEMVAULT, "mcp", "--http", "--port", "0"], env=_env(layout, user_root,
                              MEMVAULT_MCP_TOKEN=token), capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "MEMVAULT_MCP_TOKEN" in done.stderr, done
