"""`forget --purge`: an entry removed for good, with no copy left in the trash, the manifest (rows,
free pages, WAL), the embedding cache, BM25 or the vector store; each is read to check."""

from __future__ import annotations

import json
import sqlite3
import zlib

import pytest

from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV

SECRET = "quokka7731zebra"


def _store_bytes(layout):
    state = layout.root / ".memvault"
    return b"".join(p.read_bytes() for p in sorted(state.rglob("*")) if p.is_file() and p.suffix != ".log")


def _chunk_hashes(layout):
    with sqlite3.connect(layout.root / ".memvault" / "manifest.sqlite") as db:
        chunks = {h for (h,) in db.execute("SELECT content_hash FROM chunks")}
        texts = [zlib.decompress(t).decode() for (t,) in db.execute("SELECT text FROM chunks")]
    with sqlite3.connect(layout.root / ".memvault" / "embeddings.sqlite") as db:
        cached = {h for (h,) in db.execute("SELECT content_hash FROM embed_cache")}
    return chunks, cached, texts


def _plant(cli, layout):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "--key", "door", "Door code was 1111 quokka").returncode == 0
    assert cli("remember", "--type", "config", "--key", "door", f"Door code for the lab is {SECRET}").returncode == 0
    assert cli("remember", "--type", "config", "The lab opens at nine").returncode == 0
    memory = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert cli("rewrite", "memory", input=memory + "\nA line added by hand.\n").returncode == 0  # a .bak copy
    trash = [p.read_text(encoding="utf-8") for p in (layout.root / ".trash").rglob("*") if p.is_file()]
    assert any(SECRET in t for t in trash) and any("1111 quokka" in t for t in trash)


def _bm25_hits(cli, query):
    result = cli("search", "--json", "--mode", "bm25", query)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["hits"]


@pytest.mark.parametrize("through", ["here", "daemon"])
def test_purge_leaves_no_trace(layout, cli, through):
    _plant(cli, layout)
    if through == "daemon":
        start_daemon(cli, layout.root, env=HASH_ENV)
    else:
        assert cli("index", env=HASH_ENV).returncode == 0
    try:
        before_hashes, _, texts = _chunk_hashes(layout)
        assert any(SECRET in t for t in texts) and _bm25_hits(cli, SECRET)  # indexed: the checks below can fail
        assert SECRET.encode() in _store_bytes(layout)
        purged = cli("forget", "door", "--purge", env=HASH_ENV)
        assert purged.returncode == 0, purged.stderr
        assert purged.stdout.startswith("purged MEMORY.md:") and "2 older copies removed" in purged.stdout
        assert SECRET not in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
        assert "The lab opens at nine" in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
        for path in (layout.root / ".trash").rglob("*"):  # neither this version nor the older one
            assert not path.is_file() or "quokka" not in path.read_text(encoding="utf-8"), path
        assert json.loads(cli("trash", "--json").stdout)["items"] == []
        if through == "daemon":
            cli("daemon", "stop")
        chunks, cached, texts = _chunk_hashes(layout)
        assert not any("quokka" in t for t in texts) and cached <= chunks
        assert before_hashes - chunks  # the chunk that held it changed, and its cached vector went with it
        assert b"quokka" not in _store_bytes(layout)  # no row in a free page, the WAL or the vector store
        for gone in before_hashes - chunks:
            assert gone.encode() not in _store_bytes(layout)  # nor the old chunk's point payload
        assert _bm25_hits(cli, SECRET) == [] and _bm25_hits(cli, "lab opens nine")
        verified = cli("index", env=HASH_ENV)
        assert verified.returncode == 0 and verified.stdout.startswith("0 of")
    finally:
        cli("daemon", "stop")


def test_purge_says_where_the_same_text_still_is(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "--key", "pin", f"Bike lock pin {SECRET}").returncode == 0
    assert cli("note", f"Told Sam the bike lock pin {SECRET}").returncode == 0
    purged = cli("forget", "pin", "--purge", env=HASH_ENV)
    assert purged.returncode == 0 and "still in daily/" in purged.stderr
