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


def _files_holding(root, text: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes())


def test_purge_takes_the_text_out_of_summaries_the_catalog_and_leftover_temp_files(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "--key", "door", "Door code is 1111").returncode == 0
    assert cli("correct", "door", f"Door code is {SECRET}").returncode == 0  # today's summary tells it
    day = next((layout.root / "daily").glob("*.md"))
    assert SECRET in day.read_text(encoding="utf-8").split("---")[1]
    old = layout.root / "daily" / "2026-01-05.md"  # a person's summary of another day, in clauses
    assert cli("summary", "2026-01-05", f"met Ana; Door code is {SECRET}; fixed the sink").returncode == 0
    leftover = layout.root / "daily" / f".{day.name}.999999.tmp"  # a save killed before its rename
    leftover.write_text(day.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli("index", env=HASH_ENV).returncode == 0
    assert SECRET in (layout.root / "catalog" / "2026.tsv").read_text(encoding="utf-8")
    purged = cli("forget", "door", "--purge", env=HASH_ENV)
    assert purged.returncode == 0, purged.stderr
    assert "summary of daily/2026-01-05.md" in purged.stdout and f"daily/{day.name}" in purged.stdout
    assert _files_holding(layout.root, SECRET) == []  # notes, trash, leftovers, catalog, manifest, cache
    assert 'index: "met Ana; fixed the sink"' in old.read_text(encoding="utf-8")  # the other clauses stay
    assert "met Ana; fixed the sink" in (layout.root / "catalog" / "2026.tsv").read_text(encoding="utf-8")
    assert cli("forget", "--purge", "--match", "ok").returncode != 0  # "ok" is in no entry, nothing else goes


@pytest.mark.parametrize("point", ["purge-after-note", "purge-after-copies", "mid-manifest"])
def test_a_purge_killed_midway_is_finished_by_the_next(layout, cli, cli_process, point):
    _plant(cli, layout)
    assert cli("index", env=HASH_ENV).returncode == 0
    killed = cli_process("forget", "door", "--purge", env={**HASH_ENV, "MEMVAULT_CRASH_AT": point})
    assert killed.returncode == -9, killed.stderr
    assert SECRET not in (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert _files_holding(layout.root, SECRET)  # left in the index, the trash or the mark: to be finished
    again = cli("forget", "door", "--purge", env=HASH_ENV)  # asked again: no entry left, the purge is finished
    assert again.returncode == 0, again.stderr
    assert "finishing the purge" in again.stdout
    assert _files_holding(layout.root, SECRET) == [] and not (layout.root / ".memvault" / "purging.json").exists()
    assert "The lab opens at nine" in (layout.root / "MEMORY.md").read_text(encoding="utf-8")


def test_a_purge_through_the_daemon_leaves_no_proposal_or_reply_quoting_it(layout, cli):
    said = f"I prefer the door code {SECRET} for the lab."
    assert cli("init", "--lang", "en").returncode == 0
    start_daemon(cli, layout.root, env=HASH_ENV)
    journal = [layout.root / ".memvault" / f"requests.sqlite{end}" for end in ("", "-wal")]
    try:
        conversation = layout.root.parent / "conversation.json"  # extract's reply (its proposal) quotes it
        conversation.write_text(json.dumps([{"role": "user", "content": said}]))
        assert cli("extract", str(conversation)).returncode == 0
        assert cli("remember", "--type", "preference", "--key", "door", said).returncode == 0
        assert any(SECRET.encode() in p.read_bytes() for p in journal if p.exists())
        assert SECRET in (layout.root / "REVIEW.md").read_text(encoding="utf-8")
        purged = cli("forget", "--purge", "door")
        assert purged.returncode == 0, purged.stderr
        assert not any(SECRET.encode() in p.read_bytes() for p in journal if p.exists())
        assert SECRET not in (layout.root / "REVIEW.md").read_text(encoding="utf-8")  # nor the proposal
        assert "still in daily/" in purged.stderr  # the conversation's summary, a note of the day, is named
    finally:
        cli("daemon", "stop")
